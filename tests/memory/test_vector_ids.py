"""docs/spec.md §5.4 vector ids: no message id can produce another message's vector id (issue 23).

Chunk n of message ``M`` is ``M#<n>``, except chunk 0 of an id without ``#``, which is ``M``: an id
without ``#`` can only be chunk 0 of the message of that id, and an id with ``#`` splits at its last
``#`` into the message id and a chunk number. Before, chunk 0 was always ``M``, so a message named
``"M#1"`` had the id of chunk 1 of message ``M``.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mastra_memory.memory import vector_ids

#: Message ids built to collide under the old scheme: each is a chunk id of another.
HOSTILE = ["M", "M#1", "M#2", "M#0", "M#1#0", "M#1#1", "M#01", "M#", "#", "##", "#1", "M##1", "M#-1", "M# 1"]


def _origin(vector_id: str) -> tuple[str, int]:
    """The (message id, chunk) a vector id was made from: the inverse the scheme promises."""
    if "#" not in vector_id:
        return vector_id, 0
    message_id, _, n = vector_id.rpartition("#")
    assert n.isdigit(), f"{vector_id!r} does not end in a chunk number"
    assert str(int(n)) == n, f"{vector_id!r}: a chunk number has no leading zeros"
    return message_id, int(n)


def test_ordinary_ids_keep_their_vector_ids() -> None:
    """Chunk ids of messages without '#' are what they always were, so existing indexes stay valid."""
    assert vector_ids("m", 3) == ["m", "m#1", "m#2"]
    assert vector_ids("7f1c0d2e-7c55-4a4b-9a51-3e0f6f0f2a10", 1) == ["7f1c0d2e-7c55-4a4b-9a51-3e0f6f0f2a10"]
    assert vector_ids("m", 0) == []


@pytest.mark.parametrize(
    ("message_id", "expected"),
    [
        ("M#1", ["M#1#0", "M#1#1"]),  # once "M#1": chunk 1 of message "M"
        ("M#", ["M##0", "M##1"]),
        ("#", ["##0", "##1"]),
    ],
)
def test_an_id_with_a_hash_names_every_chunk(message_id: str, expected: list[str]) -> None:
    assert vector_ids(message_id, 2) == expected


def test_hostile_ids_never_share_a_vector_id() -> None:
    made: dict[str, tuple[str, int]] = {}
    for message_id in HOSTILE:
        for n, vid in enumerate(vector_ids(message_id, 3)):
            assert vid not in made, f"{message_id!r} chunk {n} and {made.get(vid)} share {vid!r}"
            made[vid] = (message_id, n)
            assert _origin(vid) == (message_id, n)


@given(
    st.text(alphabet=st.sampled_from("M#01 "), min_size=1, max_size=8),
    st.text(alphabet=st.sampled_from("M#01 "), min_size=1, max_size=8),
    st.integers(min_value=1, max_value=12),
)
def test_two_messages_never_share_a_vector_id(first: str, second: str, chunks: int) -> None:
    """Injective over (message id, chunk): the vector id determines both."""
    for message_id in (first, second):
        assert [_origin(v) for v in vector_ids(message_id, chunks)] == [
            (message_id, n) for n in range(chunks)
        ]
    if first != second:
        assert not set(vector_ids(first, chunks)) & set(vector_ids(second, chunks))
