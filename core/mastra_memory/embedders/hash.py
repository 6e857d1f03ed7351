"""``hash/<dim>``: a deterministic, dependency-free embedder for tests and examples.

Design. Each vector is the normalised sum of two unit-length parts:

* a **bag of hashed tokens** (weight 0.8): every lower-cased word token is hashed with BLAKE2b to one
  dimension and a sign (the "hashing trick"), so texts sharing words point in similar directions;
* a **whole-text component** (weight 0.6): a pseudo-random direction derived from BLAKE2b of the exact
  text, so texts with the same words but different spelling, order or punctuation still differ.

Hence equal texts give equal vectors (cosine 1.0), texts with the same bag of words score about 0.64, and
unrelated texts score near 0. Output is identical across processes, platforms and versions: nothing
depends on Python's salted ``hash`` or on NumPy's random streams. ``hash`` alone means ``hash/64``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..errors import ConfigError
from .base import EmbedResult

DEFAULT_DIMENSION = 64
MAX_DIMENSION = 65_536
TOKEN_WEIGHT = 0.8
TEXT_WEIGHT = 0.6

_TOKEN = re.compile(r"\w+")
_BLOCK_BYTES = 64  # one BLAKE2b digest: 16 little-endian uint32 values


class HashEmbedder:
    """Deterministic embeddings from BLAKE2b hashes; see the module docstring for the design."""

    max_batch_size = 4_096

    def __init__(self, dimension: int = DEFAULT_DIMENSION) -> None:
        if (
            isinstance(dimension, bool)
            or not isinstance(dimension, int)
            or not 2 <= dimension <= MAX_DIMENSION
        ):
            raise ConfigError(f"hash embedder dimension must be an integer from 2 to {MAX_DIMENSION}")
        self.dimension: int | None = dimension
        self._size = dimension
        self.model_id = f"hash/{dimension}"

    @classmethod
    def from_model(cls, model: str) -> HashEmbedder:
        """Build from the part after ``hash/``: ``""`` (64 dimensions) or a number such as ``"1536"``."""
        if not model:
            return cls()
        if not model.isdigit():
            raise ConfigError(
                f"hash embedder expects 'hash/<dimension>', e.g. 'hash/64' or 'hash/1536'; got 'hash/{model}'"
            )
        return cls(int(model))

    async def embed_many(self, texts: Sequence[str], **options: Any) -> EmbedResult:
        """Embed ``texts``; options are accepted and ignored (the output depends on the text only)."""
        return EmbedResult([self.embed_one(text).tolist() for text in texts], None)

    def embed_one(self, text: str) -> npt.NDArray[np.float64]:
        """The unit vector for one text."""
        tokens = self._token_part(text)
        whole = self._text_part(text)
        vector = TOKEN_WEIGHT * _unit(tokens) + TEXT_WEIGHT * _unit(whole)
        return _unit(vector)

    def _token_part(self, text: str) -> npt.NDArray[np.float64]:
        vector = np.zeros(self._size, dtype=np.float64)
        for token in _TOKEN.findall(text.lower()):
            digest = hashlib.blake2b(token.encode(), digest_size=8, person=b"mm-hash-token").digest()
            value = int.from_bytes(digest, "little")
            sign = 1.0 if value >> 63 else -1.0
            vector[value % self._size] += sign
        return vector

    def _text_part(self, text: str) -> npt.NDArray[np.float64]:
        seed = hashlib.blake2b(text.encode(), digest_size=32, person=b"mm-hash-text").digest()
        blocks = -(-self._size * 4 // _BLOCK_BYTES)
        stream = b"".join(
            hashlib.blake2b(i.to_bytes(8, "little"), key=seed, digest_size=_BLOCK_BYTES).digest()
            for i in range(blocks)
        )
        values = np.frombuffer(stream, dtype="<u4", count=self._size).astype(np.float64)
        return values / 2.0**32 - 0.5


def _unit(vector: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
