"""``hash/<dim>``: deterministic test embeddings (docs/spec.md §5.7, §8.3 M1)."""

from __future__ import annotations

import numpy as np
import pytest

from mastra_memory.embedders.hash import HashEmbedder
from mastra_memory.errors import ConfigError

SCENARIO = ["alpha apples", "alpha bananas", "alpha cherries", "alpha dates", "beta eggs"]


async def embed(embedder: HashEmbedder, texts: list[str]) -> np.ndarray:
    return np.asarray((await embedder.embed_many(texts)).embeddings)


async def test_equal_texts_give_equal_vectors_across_instances() -> None:
    first = await embed(HashEmbedder(64), ["alpha bananas", "alpha bananas"])
    second = await embed(HashEmbedder(64), ["alpha bananas"])

    assert first[0].tolist() == first[1].tolist() == second[0].tolist()


async def test_vectors_are_unit_length_and_distinct() -> None:
    vectors = await embed(HashEmbedder(64), [*SCENARIO, "", "!!!"])

    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert len({tuple(v) for v in vectors}) == len(vectors)


async def test_m1_query_hits_the_identical_message_with_score_one() -> None:
    embedder = HashEmbedder(64)
    messages = await embed(embedder, SCENARIO)
    (query,) = await embed(embedder, ["alpha bananas"])

    scores = messages @ query

    assert scores[1] == pytest.approx(1.0, abs=1e-12)
    assert int(np.argmax(scores)) == 1
    assert max(np.delete(scores, 1)) < 0.999  # M7: nothing else passes a 0.999 threshold


async def test_shared_words_score_higher_than_unrelated_text() -> None:
    embedder = HashEmbedder(256)
    same_words, shared, unrelated = await embed(
        embedder, ["The cat sat on the mat", "the cat sat on the mat!", "quarterly tax filing"]
    )
    (base,) = await embed(embedder, ["The cat sat on the mat."])

    assert same_words @ base > 0.5
    assert shared @ base > unrelated @ base


async def test_output_is_stable_across_versions() -> None:
    # A golden value: the design promises identical vectors on every platform and release.
    (vector,) = await embed(HashEmbedder(4), ["alpha bananas"])

    assert vector.round(6).tolist() == [0.011817, 0.669781, -0.613723, 0.41785]


@pytest.mark.parametrize(("model", "dimension"), [("", 64), ("64", 64), ("1536", 1536), ("2", 2)])
async def test_dimension_from_the_model_string(model: str, dimension: int) -> None:
    embedder = HashEmbedder.from_model(model)

    (vector,) = await embed(embedder, ["hello"])

    assert embedder.model_id == f"hash/{dimension}"
    assert embedder.dimension == len(vector) == dimension


@pytest.mark.parametrize("model", ["abc", "-3", "1", "0", "70000", "64.0"])
def test_invalid_dimensions_are_config_errors(model: str) -> None:
    with pytest.raises(ConfigError, match="hash"):
        HashEmbedder.from_model(model)
