"""Observational memory (docs/spec.md §5.14): an Observer condenses old messages into dated observations
and a Reflector condenses the observations, so the prompt carries observations instead of the observed
messages. One job per module:

* :mod:`.options` -- Mastra's ``ObservationalMemoryOptions``, defaults and the refused options (buffering);
* :mod:`.tokens` -- token counting for the thresholds;
* :mod:`.prompts` -- the Observer's and Reflector's requests, their replies parsed, the prompt section;
* :mod:`.groups` -- observation groups and their message ranges;
* :mod:`.observer` / :mod:`.reflector` -- the two model calls;
* :mod:`.engine` -- the cycles over storage (thresholds, compare-and-set flags, hooks, usage);
* :mod:`.processor` -- the ``observational-memory`` input/output processor;
* :mod:`.retrieval` -- the ``memory_observations_<dim>`` index, the observation search, the ``recall`` tool.

Asynchronous buffering is not built: its options are refused by :mod:`.options` (docs/spec.md §5.14 [Δ]).
"""

from __future__ import annotations

from .options import (
    ObservationalMemoryOptions,
    ObservationConfig,
    ObserveHooks,
    ReflectionConfig,
    RetrievalConfig,
    UnsupportedOMOptionError,
)

__all__ = [
    "ObservationConfig",
    "ObservationalMemoryOptions",
    "ObserveHooks",
    "ReflectionConfig",
    "RetrievalConfig",
    "UnsupportedOMOptionError",
]
