"""``local/wordllama``: the offline default embedder, with the weights shipped in the wheel."""

from __future__ import annotations

import numpy as np
import pytest
import wordllama  # noqa: F401  # imported early: urllib3 (via requests) opens a socket at import to probe IPv6

from mastra_memory.embedders import embed_with_cache, resolve_embedder
from mastra_memory.embedders.wordllama_local import WordLlamaEmbedder, _load
from mastra_memory.errors import ConfigError, EmbeddingError


def test_loads_with_no_network_at_all(monkeypatch: pytest.MonkeyPatch, socket_disabled: None) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    model = _load()  # the loader itself, not the per-process copy another test may have loaded

    assert model.embedding.shape == (32000, 256)


async def test_similar_texts_score_higher_than_unrelated_ones() -> None:
    embedder = resolve_embedder("local/wordllama")

    result = await embedder.embed_many(
        ["I love my dog", "my puppy is great", "quarterly tax filing deadline"]
    )

    dog, puppy, tax = np.asarray(result.embeddings)
    assert dog @ puppy > dog @ tax + 0.2
    assert puppy @ dog > puppy @ tax + 0.2


async def test_vectors_are_256_dimensional_unit_vectors() -> None:
    embedder = WordLlamaEmbedder()

    result = await embed_with_cache(embedder, ["hello world", "  ", "emoji \U0001f600"])

    vectors = np.asarray(result.embeddings)
    assert embedder.dimension == 256
    assert vectors.shape == (3, 256)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    assert result.usage_tokens is None


@pytest.mark.parametrize("size", [64, 128])
async def test_dimensions_option_truncates(size: int) -> None:
    full = np.asarray((await WordLlamaEmbedder().embed_many(["a sunny day"])).embeddings[0])
    embedder = WordLlamaEmbedder("wordllama", {"dimensions": size})

    (short,) = (await embedder.embed_many(["a sunny day"])).embeddings

    assert embedder.dimension == len(short) == size
    expected = full[:size] / np.linalg.norm(full[:size])
    assert np.allclose(short, expected)


async def test_truncated_and_full_vectors_do_not_share_cache_entries() -> None:
    await embed_with_cache(WordLlamaEmbedder(), ["a sunny day"])

    result = await embed_with_cache(WordLlamaEmbedder("wordllama", {"dimensions": 64}), ["a sunny day"])

    assert len(result.embeddings[0]) == 64


async def test_empty_text_is_an_embedding_error() -> None:
    with pytest.raises(EmbeddingError, match="empty text"):
        await WordLlamaEmbedder().embed_many(["fine", ""])


@pytest.mark.parametrize("options", [{"dimensions": 100}, {"dimensions": 512}, {"dimensions": True}])
def test_unsupported_dimensions_are_config_errors(options: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match="64, 128, 256"):
        WordLlamaEmbedder("wordllama", options)


def test_unknown_local_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="local/wordllama"):
        resolve_embedder("local/other-model")
