"""``local/all-minilm-l6-v2``: all-MiniLM-L6-v2 from the packaged weights, run by a numpy forward pass."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import pytest

from mastra_memory.embedders import minilm_local, resolve_embedder
from mastra_memory.embedders.minilm_local import MODEL_ID, MiniLMEmbedder, load_model
from mastra_memory.errors import ConfigError

pytest.importorskip("all_minilm_l6_v2", reason="the weights package comes with mastra-memory[minilm]")

SENTENCES = [
    "When did Caroline go to the LGBTQ support group?",
    "Hey Mel! Good to see you! How have you been?",
    "the spare key is under the blue pot",
    "a",
    "Ünïcödé, emoji \U0001f600 and a much longer sentence, so that a batch pads the short ones " * 3,
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The packaged model as a directory (what Sentence Transformers and ``model_path`` read)."""
    import all_minilm_l6_v2

    target = tmp_path_factory.mktemp("minilm")
    with zipfile.ZipFile(Path(all_minilm_l6_v2.__file__).parent / "model.zip") as archive:
        archive.extractall(target)
    return target


def test_loads_with_no_network_at_all(monkeypatch: pytest.MonkeyPatch, socket_disabled: None) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")

    model = load_model()

    assert model.words.shape == (30522, 384)
    assert len(model.layers) == 6


def test_vectors_are_those_of_sentence_transformers(model_dir: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    reference = st.SentenceTransformer(str(model_dir), device="cpu").encode(
        SENTENCES, normalize_embeddings=True
    )

    ours = load_model().encode(SENTENCES)

    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() >= 0.999, cosines


async def test_router_string_gives_384_dimensional_unit_vectors() -> None:
    embedder = resolve_embedder("local/all-minilm-l6-v2")

    result = await embedder.embed_many(
        ["I love my dog", "my puppy is great", "quarterly tax filing deadline"]
    )

    vectors = np.asarray(result.embeddings)
    assert embedder.model_id == MODEL_ID
    assert embedder.dimension == 384
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    dog, puppy, tax = vectors
    assert dog @ puppy > dog @ tax + 0.2


async def test_a_batch_embeds_each_text_as_it_would_alone() -> None:
    embedder = MiniLMEmbedder()

    together = np.asarray((await embedder.embed_many(SENTENCES)).embeddings)
    alone = np.asarray([(await embedder.embed_many([s])).embeddings[0] for s in SENTENCES])

    assert np.allclose(together, alone, atol=1e-5)


async def test_model_path_reads_a_directory(model_dir: Path) -> None:
    embedder = MiniLMEmbedder({"model_path": str(model_dir)})

    (vector,) = (await embedder.embed_many(["hello"])).embeddings

    assert len(vector) == 384


async def test_a_directory_without_the_model_is_a_config_error(tmp_path: Path) -> None:
    embedder = MiniLMEmbedder({"model_path": str(tmp_path)})

    with pytest.raises(ConfigError, match=r"model\.safetensors"):
        await embedder.embed_many(["hello"])


def test_without_a_weights_package_the_error_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(minilm_local, "WEIGHT_PACKAGES", (("no_such_weights_package", "model.zip"),))

    with pytest.raises(ConfigError, match=r"mastra-memory\[minilm\]"):
        load_model()


def test_model_path_must_be_a_string() -> None:
    with pytest.raises(ConfigError, match="model_path"):
        MiniLMEmbedder({"model_path": 3})
