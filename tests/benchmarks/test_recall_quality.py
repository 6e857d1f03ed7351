"""The recall-quality harness (tests/benchmarks/recall_quality.py) on its synthetic conversations: the
loader, the metrics and the command line, with the deterministic ``hash/64`` embedder. What the numbers
are on LoCoMo belongs in docs/memory.md, not in assertions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from . import recall_quality as quality


def test_metrics_count_turns_sessions_and_ndcg() -> None:
    scores = quality.Scores()
    sessions = {"D1:1": 1, "D1:2": 1, "D2:1": 2}
    scores.add(["D1:2", "D2:1"], frozenset({"D2:1"}), sessions)
    scores.add(["D1:1"], frozenset({"D1:2"}), sessions)

    summary = scores.summary()
    assert summary["turn_recall@5"] == 0.5
    assert summary["session_recall@5"] == 1.0
    assert summary["ndcg@10"] == pytest.approx((1 / 1.584962500721156) / 2)


def test_locomo_loader_keeps_non_adversarial_questions_with_evidence(tmp_path: Path) -> None:
    sample = {
        "sample_id": "conv-x",
        "conversation": {
            "speaker_a": "A",
            "speaker_b": "B",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "A", "dia_id": "D1:1", "text": "hi"},
                {"speaker": "B", "dia_id": "D1:2", "text": "look", "blip_caption": "a photo of a dog"},
            ],
        },
        "qa": [
            {"question": "q1", "answer": "x", "evidence": ["D1:2"], "category": 1},
            {"question": "q2", "evidence": ["D1:1"], "category": 5},
            {"question": "q3", "answer": "y", "evidence": ["D9:9"], "category": 2},
        ],
    }
    path = tmp_path / "locomo.json"
    path.write_text(json.dumps([sample]))

    [conv] = quality.load_locomo(path)

    assert [q.text for q in conv.questions] == ["q1"]
    assert conv.sessions[0].date.year == 2023
    assert "a photo of a dog" in conv.sessions[0].turns[1].text


def test_command_line_runs_the_synthetic_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "quality.json"
    cache = tmp_path / "cache.db"
    args = ["--embedders", "hash/64", "--fusions", "--cache", str(cache), "--json", str(out)]

    assert quality.main(args) == 0
    [result] = json.loads(out.read_text())
    rankers = result["rankers"]
    assert {"recall vector", "recall hybrid", "fts5 bm25"} <= set(rankers)
    assert all(r["questions"] == 10 for r in rankers.values())
    # Keyword questions: BM25 over the turns finds their evidence.
    assert rankers["fts5 bm25"]["turn_recall@10"] == 1.0
    assert "| hash/64 | recall hybrid |" in capsys.readouterr().out

    assert quality.main(args) == 0  # the second run embeds nothing: every vector comes from the cache
    assert json.loads(out.read_text())[0]["embedded_now"] == 0
