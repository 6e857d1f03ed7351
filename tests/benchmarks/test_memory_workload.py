"""Smoke tests of the issue-19 benchmark harness (tests/benchmarks/memory_workload.py) at a tiny size.

They keep the harness from rotting and check what its numbers rest on — a fixed workload, exact stores
agreeing with the bare-numpy exact search, the saved JSON and the compare mode — never how fast anything
is (speed belongs in the benchmark's output, not in test assertions).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from . import memory_workload as bench

SIZE = 100
RECALLS = 10


def test_workload_is_fixed() -> None:
    # Runs of two commits are only comparable if they measured the same workload: a change to the
    # generator must be deliberate (update this digest and say so in docs/performance.md).
    work = bench.build_workload(SIZE, RECALLS)
    digest = hashlib.sha256(json.dumps(dataclasses.asdict(work)).encode()).hexdigest()
    assert digest == "3ad7ab1393f62edd727700e37e7888945534c21b9f0b36309d23ebc5bd3c2552"
    assert len(work.messages) == SIZE
    assert {m.thread_id for m in work.messages[: bench.SAVE_BATCH]} == {"thread-00"}
    assert len(work.resource_queries) == len(work.thread_queries) == RECALLS


async def test_sqlite_run_agrees_with_exact_search() -> None:
    result = await bench.run_workload("sqlite", SIZE, RECALLS)

    # The embedded store searches exactly: its top 3 are numpy's top 3 over the same rows, and a
    # paraphrase finds the message it was made from.
    for scope in ("resource", "thread"):
        figures = result["scopes"][scope]
        assert figures["recall_at_k"] == 1.0, scope
        assert figures["source_hit_rate"] == 1.0, scope
        assert figures["store"]["n"] == figures["numpy"]["n"] == RECALLS
    assert result["after_save"]["after_save"]["n"] == bench.SAVE_PAIRS
    assert result["ingest"]["msg_per_s"] > 0
    assert result["disk_bytes"] > 0


def test_command_line_saves_json_and_compares(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    args = ["--stores", "sqlite", "--sizes", "40", "--recalls", "5", "--out", str(out)]
    assert bench.main(args) == 0
    [saved] = out.glob("sqlite-*.json")
    run = json.loads(saved.read_text())
    assert run["machine"]["commit"]
    assert [(r["store"], r["size"]) for r in run["results"]] == [("sqlite", 40)]
    printed = capsys.readouterr().out
    assert "recall p50 / p95, scope resource" in printed

    assert bench.main(["--table", str(saved), "--markdown"]) == 0
    assert "| recall p50 / p95, scope thread |" in capsys.readouterr().out

    other = tmp_path / "other.json"
    changed = json.loads(saved.read_text())
    changed["results"][0]["ingest"]["msg_per_s"] *= 2
    other.write_text(json.dumps(changed))
    assert bench.main(["--compare", str(saved), str(other)]) == 0
    printed = capsys.readouterr().out
    assert "ingest.msg_per_s" in printed
    assert "+100.0%" in printed


@pytest.mark.skipif(bench.mastra_available() is not None, reason=str(bench.mastra_available()))
def test_mastra_runs_the_same_workload() -> None:
    # Mastra's own store is exact at this size too: the same vectors reached it.
    result = bench.run_mastra(40, 5, timeout=240)
    assert result["scopes"]["resource"]["recall_at_k"] == 1.0
    assert result["versions"]["@mastra/memory"]


_STUBBORN = """
import signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # busy in native code: never sees the SIGINT
server = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"], start_new_session=True)
open(sys.argv[1], "w").write(str(server.pid))
time.sleep(600)
"""


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads the process tree from Linux's /proc")
@pytest.mark.timeout(60)
def test_a_timed_out_worker_leaves_no_server_running(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker that ignores SIGINT is killed after the grace, and the server it started in its own session
    (as the kit's launcher starts them) is stopped by pid instead of left running."""
    monkeypatch.setattr(bench, "STOP_GRACE", 1.0)
    monkeypatch.setattr(bench, "LEFTOVER_GRACE", 2.0)
    pid_file = tmp_path / "server.pid"
    script = tmp_path / "stubborn.py"
    script.write_text(_STUBBORN)
    cmd = [sys.executable, str(script), str(pid_file)]
    with pytest.raises(subprocess.TimeoutExpired):
        bench._bounded_run(cmd, timeout=3.0, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    server = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while bench._started(server) is not None and time.monotonic() < deadline:
        time.sleep(0.1)  # reaped by init once killed
    assert bench._started(server) is None
