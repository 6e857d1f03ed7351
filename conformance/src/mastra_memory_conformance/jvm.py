"""What the test servers that run in a local JVM share (OpenSearch, S3Mock): the Java tools, the check of
their version, and the flags and heap every such JVM starts with.

Like :mod:`mastra_memory_conformance.launcher`, whose server process runs the command built here, it starts
nothing on import.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from .launcher import require_tool
from .targets import TargetUnavailable

__all__ = ["check_java", "java_tool", "jvm_command", "jvm_heap"]

_VERSION_TIMEOUT: Final = 60.0


def java_tool(name: str, purpose: str) -> str:
    """``$JAVA_HOME/bin/<name>`` when it exists, else ``name`` on PATH (:func:`require_tool`: unavailable,
    saying it is needed to ``purpose``, when it is not there either)."""
    java_home = os.environ.get("JAVA_HOME", "").strip()
    if java_home and (Path(java_home) / "bin" / name).is_file():
        return str(Path(java_home) / "bin" / name)
    return require_tool(name, purpose)


def check_java(java: str, minimum: int, needs: str) -> None:
    """:class:`TargetUnavailable` unless ``java -version`` reports ``minimum`` or newer; ``needs`` names
    what needs it (``"S3Mock"``)."""
    result = subprocess.run(
        [java, "-version"], capture_output=True, text=True, check=False, timeout=_VERSION_TIMEOUT
    )
    found = re.search(r'version "(\d+)(?:\.(\d+))?', result.stderr + result.stdout)
    if found is None:
        raise TargetUnavailable(f"could not read the version of {java}: {result.stderr.strip()[:200]}")
    major = int(found.group(1))
    if major == 1 and found.group(2):  # "1.8.0_..." style
        major = int(found.group(2))
    if major < minimum:
        raise TargetUnavailable(
            f"{java} is Java {major}; {needs} needs Java {minimum} or newer (set JAVA_HOME)"
        )


def jvm_heap(heap: str | None, env_var: str, default: str) -> str:
    """The JVM heap: ``heap`` when given, else ``$<env_var>``, else ``default``."""
    return heap or os.environ.get(env_var, "").strip() or default


def jvm_command(java: str, *, heap: str, tmpdir: Path, flags: Sequence[str] = ()) -> list[str]:
    """The start of a JVM's command line: a fixed heap, an exit on the first ``OutOfMemoryError`` (a test
    server that limps on only fails later, elsewhere), then ``flags``, no display, UTF-8 and its own
    temporary directory. The classpath, the main class and its arguments follow."""
    return [
        java,
        f"-Xms{heap}",
        f"-Xmx{heap}",
        "-XX:+ExitOnOutOfMemoryError",
        *flags,
        "-Djava.awt.headless=true",
        "-Dfile.encoding=UTF-8",
        f"-Djava.io.tmpdir={tmpdir}",
    ]
