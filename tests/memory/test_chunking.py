"""docs/spec.md §5.4 chunking: maximal slices cut at whitespace, hard cuts only inside long words."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.memory.index.chunking import DEFAULT_CHUNK_SIZE, chunk_text
from mastra_memory.memory.index.indexer import default_index_name, vector_ids


def test_default_chunk_size() -> None:
    assert DEFAULT_CHUNK_SIZE == 16_384


@pytest.mark.parametrize(
    ("text", "size", "expected"),
    [
        ("", 5, []),
        ("   \n\t ", 5, []),
        ("  hello  ", 5, ["hello"]),
        ("hello world", 11, ["hello world"]),
        ("hello world", 10, ["hello", "world"]),
        ("hello world", 5, ["hello", "world"]),
        ("aa bb cc dd", 5, ["aa bb", "cc dd"]),
        ("aa  \n  bb", 4, ["aa", "bb"]),  # the whitespace run at a cut is dropped
        ("line one\nline two", 17, ["line one\nline two"]),  # newlines inside a chunk stay
        ("abcdefghij", 4, ["abcd", "efgh", "ij"]),  # a long word is cut every chunk_size
        ("ab abcdefghij cd", 4, ["ab", "abcd", "efgh", "ij", "cd"]),
        ("abcd efgh", 4, ["abcd", "efgh"]),
    ],
)
def test_chunk_examples(text: str, size: int, expected: list[str]) -> None:
    assert chunk_text(text, size) == expected


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size must be >= 1"):
        chunk_text("x", 0)


@given(st.text(alphabet=st.sampled_from("ab \n"), max_size=80), st.integers(min_value=1, max_value=12))
def test_chunks_are_bounded_non_empty_and_lose_only_whitespace(text: str, size: int) -> None:
    chunks = chunk_text(text, size)
    assert all(0 < len(c) <= size for c in chunks)
    assert all(c == c.strip() for c in chunks)
    # no non-whitespace character is lost, duplicated or reordered
    assert "".join("".join(c.split()) for c in chunks) == "".join(text.split())
    if len(text.strip()) <= size:
        assert chunks == ([text.strip()] if text.strip() else [])


def test_vector_ids_and_default_names() -> None:
    assert vector_ids("m", 3) == ["m", "m#1", "m#2"]
    assert vector_ids("m", 0) == []
    assert default_index_name(1536, "_") == "memory_messages"
    assert default_index_name(384, "_") == "memory_messages_384"
    assert default_index_name(768, "-") == "memory-messages-768"
