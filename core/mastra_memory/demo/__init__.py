"""The ``mastra-memory demo`` data and runner, the JSON Lines loader shared with ``ingest``, and
:mod:`~mastra_memory.demo.opening`, the ``Memory`` every memory command and the demo open.

``sample.jsonl`` (package data) is in the format :mod:`mastra_memory.demo.loader` reads, so
``mastra-memory ingest`` accepts it too.
"""

from __future__ import annotations

from .loader import LoadReport, MessageFile, load_messages, parse_lines
from .runner import (
    DEMO_DB,
    DEMO_RESOURCE,
    QUESTIONS,
    DemoQuestion,
    DemoReport,
    data_dir,
    default_demo_db,
    read_sample,
    run_demo,
)

__all__ = [
    "DEMO_DB",
    "DEMO_RESOURCE",
    "QUESTIONS",
    "DemoQuestion",
    "DemoReport",
    "LoadReport",
    "MessageFile",
    "data_dir",
    "default_demo_db",
    "load_messages",
    "parse_lines",
    "read_sample",
    "run_demo",
]
