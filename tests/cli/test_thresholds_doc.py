"""docs/memory.md "Thresholds" states measured score ranges; this measures them again on the demo sample,
and checks the weak level the command line uses (issue 17: document thresholds per embedder honestly)."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from mastra_memory.cli.common import WEAK_SCORES
from mastra_memory.demo.runner import QUESTIONS, read_sample
from mastra_memory.embedders.router import resolve_embedder
from mastra_memory.messages import message_text


def scores(embedder: str) -> tuple[list[float], list[float]]:
    """(question vs its answer, question vs every message of the other threads) on the demo sample."""
    messages = read_sample().messages
    questions = [q.text for q in QUESTIONS]
    found = asyncio.run(
        resolve_embedder(embedder).embed_many(questions + [message_text(m) for m in messages])
    )
    vectors = np.asarray(found.embeddings, dtype=float)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = vectors[: len(questions)] @ vectors[len(questions) :].T
    answers, unrelated = [], []
    for i, question in enumerate(QUESTIONS):
        answer = next(j for j, m in enumerate(messages) if m.id == question.answer_id)
        answers.append(float(similarity[i, answer]))
        thread = messages[answer].thread_id
        unrelated += [float(similarity[i, j]) for j, m in enumerate(messages) if m.thread_id != thread]
    return answers, unrelated


def test_wordllama_ranges_and_its_weak_level() -> None:
    pytest.importorskip("wordllama")
    answers, unrelated = scores("local/wordllama")
    assert round(min(answers), 3) == 0.378
    assert round(max(answers), 3) == 0.693
    assert round(max(unrelated), 3) == 0.230
    level = WEAK_SCORES["local/wordllama"]
    assert max(unrelated) < level < min(answers)  # 0.3 keeps every answer, drops every unrelated message
    assert max(answers) < 0.7  # the threshold the docs once showed would drop every answer


@pytest.mark.parametrize(("embedder", "answers_range", "unrelated_max"), [
    ("hash/64", (0.059, 0.475), 0.432),
    ("hash/256", (0.183, 0.425), 0.314),
])  # fmt: skip
def test_hash_has_no_separating_level(
    embedder: str, answers_range: tuple[float, float], unrelated_max: float
) -> None:
    answers, unrelated = scores(embedder)
    assert (round(min(answers), 3), round(max(answers), 3)) == answers_range
    assert round(max(unrelated), 3) == unrelated_max
    assert max(unrelated) > min(answers)  # overlap: no threshold separates them
    assert embedder not in WEAK_SCORES
