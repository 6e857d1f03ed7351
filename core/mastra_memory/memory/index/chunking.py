"""Cutting message text into embedding chunks (docs/spec.md §5.4).

The same rule chunks stored messages and recall queries, so a long query yields several embeddings.
"""

from __future__ import annotations

import re

DEFAULT_CHUNK_SIZE = 16_384

_WHITESPACE = re.compile(r"\s+")


def chunk_text(text: str, chunk_size: int = DEFAULT_CHUNK_SIZE) -> list[str]:
    """Split ``text`` into maximal slices of at most ``chunk_size`` characters.

    The text is stripped first; text that fits is one chunk. Longer text is cut only at whitespace (the
    whitespace run at a cut is dropped); a run of non-whitespace longer than ``chunk_size`` is cut every
    ``chunk_size`` characters. Never returns empty chunks; newlines inside a chunk are preserved.
    """
    if chunk_size < 1:
        raise ValueError("chunk_size must be >= 1")
    text = text.strip()
    if not text:
        return []
    if len(text) <= chunk_size:
        return [text]
    chunks: list[str] = []
    start = 0
    n = len(text)
    while start < n:
        if n - start <= chunk_size:
            chunks.append(text[start:])
            break
        end = start + chunk_size
        # The last whitespace run that starts within the window (the char at `end` counts: a cut there
        # keeps a full-size chunk).
        cut = -1
        for match in _WHITESPACE.finditer(text, start + 1, end + 1):
            cut = match.start()
        if cut > start:
            chunks.append(text[start:cut])
            ws = _WHITESPACE.match(text, cut)
            start = ws.end() if ws else cut
        else:
            chunks.append(text[start:end])
            start = end
            ws = _WHITESPACE.match(text, start)
            if ws:
                start = ws.end()
    return [c for c in chunks if c]
