"""Retrieval over observational memory (docs/spec.md §5.14): the observation index, the search over
observation groups (Mastra's ``searchMessages``) and the ``recall`` tool that pages through the original
messages behind a group's range.

The index is ``memory_observations_<dim>`` on the Memory's vector store (Mastra's name and its metadata:
``group_id``, ``range``, ``thread_id``, ``resource_id``, ``observed_at`` as ISO text, ``text``), one vector
per chunk of a group's text, with Mastra's ids (a UUID from the SHA-256 of ``[resource, thread, group,
chunk]``), so indexing a group again replaces its vectors. Every search is filtered by ``resource_id``
and every thread the tool reads is checked to belong to the request's resource: no tenant reaches
another's observations or messages.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from ...errors import ThreadOwnershipError, ValidationError
from ...messages import MastraDBMessage
from ...storage import MemoryStorage, Thread
from ...timestamps import canonical_timestamp
from ...vector import MastraVector
from ..index.chunking import chunk_text
from ..processors.base import MemoryTool
from ..processors.context import MemoryContext
from .prompts import message_text

#: The observation index's name before the ``_<dimension>`` suffix (Mastra's ``observationIndexPrefix``).
OBSERVATION_INDEX_PREFIX = "memory_observations"
RECALL_TOOL = "recall"
#: Characters of a message part shown at ``detail='low'`` (the rest is behind ``detail='high'``).
LOW_DETAIL_CHARS = 300


class _Embeds(Protocol):
    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int | None]: ...


@dataclass(frozen=True)
class ObservationSearchHit:
    """One observation group found by :meth:`ObservationIndex.search` (Mastra's searchMessages result)."""

    thread_id: str
    score: float
    group_id: str
    range: str | None
    text: str | None
    observed_at: datetime | None


def observation_vector_id(resource_id: str, thread_id: str, group_id: str, chunk: int) -> str:
    """Mastra's vector id of a group's chunk: a version-8-style UUID from the SHA-256 of the JSON array
    ``[resource_id, thread_id, group_id, chunk]``."""
    digest = bytearray(
        hashlib.sha256(
            json.dumps(
                [resource_id, thread_id, group_id, chunk], separators=(",", ":"), ensure_ascii=False
            ).encode()
        ).digest()
    )
    digest[6] = (digest[6] & 0x0F) | 0x80
    digest[8] = (digest[8] & 0x3F) | 0x80
    h = digest[:16].hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


class ObservationIndex:
    """The ``memory_observations_<dim>`` index on a vector store, embedding through ``embedder``."""

    def __init__(self, vector: MastraVector, embedder: _Embeds) -> None:
        self.vector = vector
        self.embedder = embedder
        self._created: set[str] = set()

    async def _index(self, dimension: int) -> str:
        name = f"{OBSERVATION_INDEX_PREFIX}{self.vector.index_separator}{dimension}"
        if name not in self._created:
            if self.vector.to_native_index_name(name) not in await self.vector.list_indexes():
                await self.vector.create_index(name, dimension)
            self._created.add(name)
        return name

    async def index_observation(
        self,
        *,
        text: str,
        group_id: str,
        range: str,
        thread_id: str,
        resource_id: str,
        observed_at: datetime | None = None,
    ) -> list[str]:
        """Embed one group's text (in chunks) and upsert it; returns the vector ids (Mastra's
        ``indexObservation``)."""
        chunks = chunk_text(text)
        if not chunks:
            return []
        embeddings, _ = await self.embedder.embed(chunks)
        name = await self._index(len(embeddings[0]))
        ids = [observation_vector_id(resource_id, thread_id, group_id, n) for n, _ in enumerate(chunks)]
        stamp = canonical_timestamp(observed_at) if observed_at is not None else None
        metadata = [
            {
                "group_id": group_id,
                "range": range,
                "thread_id": thread_id,
                "resource_id": resource_id,
                **({"observed_at": stamp} if stamp is not None else {}),
                "text": chunk,
            }
            for chunk in chunks
        ]
        return await self.vector.upsert(name, embeddings, metadata=metadata, ids=ids)

    async def search(
        self,
        query: str,
        *,
        resource_id: str,
        top_k: int = 10,
        filter: Mapping[str, Any] | None = None,
    ) -> list[ObservationSearchHit]:
        """Observation groups of ``resource_id`` by similarity to ``query``, one hit per group (its best
        chunk), best first (Mastra's ``searchMessages``). ``filter``: ``thread_id``, ``observed_after``,
        ``observed_before`` (datetimes, exclusive)."""
        if not isinstance(query, str) or not query.strip():
            raise ValidationError(f"query must be a non-empty string, got {query!r}")
        if not isinstance(resource_id, str) or not resource_id:
            raise ValidationError("search_observations needs a resource_id")
        flt: dict[str, Any] = {"resource_id": resource_id}
        extra = dict(filter or {})
        unknown = set(extra) - {
            "thread_id",
            "threadId",
            "observed_after",
            "observedAfter",
            "observed_before",
            "observedBefore",
        }
        if unknown:
            raise ValidationError(
                "search_observations filter accepts thread_id, observed_after and observed_before; "
                f"got {sorted(unknown)}"
            )
        thread_id = extra.get("thread_id", extra.get("threadId"))
        if thread_id:
            flt["thread_id"] = thread_id
        after = extra.get("observed_after", extra.get("observedAfter"))
        before = extra.get("observed_before", extra.get("observedBefore"))
        if after is not None or before is not None:
            flt["observed_at"] = {
                **({"$gt": canonical_timestamp(after)} if after is not None else {}),
                **({"$lt": canonical_timestamp(before)} if before is not None else {}),
            }
        embeddings, _ = await self.embedder.embed([query])
        name = await self._index(len(embeddings[0]))
        best: dict[str, ObservationSearchHit] = {}
        for hit in await self.vector.query(name, embeddings[0], top_k=top_k, filter=flt):
            meta = hit.metadata or {}
            group_id, thread = meta.get("group_id"), meta.get("thread_id")
            if not isinstance(group_id, str) or not isinstance(thread, str):
                continue
            if meta.get("resource_id") != resource_id:
                continue  # belt and braces: the filter already keeps other tenants out
            observed = meta.get("observed_at")
            found = ObservationSearchHit(
                thread,
                float(hit.score),
                group_id,
                meta.get("range") if isinstance(meta.get("range"), str) else None,
                meta.get("text") if isinstance(meta.get("text"), str) else None,
                datetime.fromisoformat(observed.replace("Z", "+00:00"))
                if isinstance(observed, str)
                else None,
            )
            if group_id not in best or found.score > best[group_id].score:
                best[group_id] = found
        return sorted(best.values(), key=lambda h: -h.score)


class RecallTool(MemoryTool):
    """The ``recall`` tool (Mastra's, docs/spec.md §5.14): pages through the original messages behind
    observation groups.

    ``mode``: ``"messages"`` (default; from ``cursor`` — a message id from a group's range — or the start/end
    of ``thread_id``, ``page``/``limit`` paging, ``detail`` low/high), ``"threads"`` (the resource's
    threads) or ``"search"`` (``query`` over the observation index; only with ``retrieval.vector``).
    ``scope='thread'`` keeps it to the request's thread. Every thread it reads must belong to the request's
    resource (``ThreadOwnershipError`` otherwise).
    """

    name = RECALL_TOOL
    description = (
        "Read the original messages behind your observations: mode 'messages' with a cursor (a message id "
        "from an observation group's range) or a threadId, mode 'threads' to list the user's threads, "
        "mode 'search' with a query to find observations by meaning."
    )

    def __init__(
        self, storage: MemoryStorage, index: ObservationIndex | None, scope: str = "resource"
    ) -> None:
        self.storage = storage
        self.index = index
        self.scope = scope
        modes = ["messages", "threads"] + (["search"] if index is not None else [])
        self.parameters: dict[str, Any] = {
            "type": "object",
            "properties": {
                "mode": {"type": "string", "enum": modes},
                "query": {"type": "string"},
                "cursor": {"type": "string"},
                "threadId": {"type": "string"},
                "anchor": {"type": "string", "enum": ["start", "end"]},
                "page": {"type": "integer"},
                "limit": {"type": "integer"},
                "detail": {"type": "string", "enum": ["low", "high"]},
            },
        }

    async def execute(self, args: Mapping[str, Any] | str, request_context: Any = None) -> dict[str, Any]:
        """Run one call for the request's thread/resource; returns Mastra's result shape per mode."""
        if isinstance(args, str):
            args = json.loads(args or "{}")
        if not isinstance(args, Mapping):
            raise ValidationError("recall arguments must be an object")
        ctx = MemoryContext.read(request_context)
        if ctx is None or ctx.resource_id is None:
            raise ValidationError(
                'recall needs the request context of a thread and resource: {"MastraMemory": {"thread": '
                '{"id": ...}, "resource_id": ...}}'
            )
        mode = args.get("mode") or "messages"
        limit = _int(args.get("limit"), 20, "limit")
        if limit < 1:
            raise ValidationError("limit must be >= 1")
        if mode == "threads":
            return await self._threads(ctx, _int(args.get("page"), 0, "page"), limit)
        if mode == "search":
            return await self._search(ctx, args.get("query"), limit)
        if mode != "messages":
            raise ValidationError(f"mode must be 'messages', 'threads' or 'search', got {mode!r}")
        return await self._messages(ctx, args, limit)

    async def _own_thread(self, ctx: MemoryContext, thread_id: str) -> Thread:
        if self.scope == "thread" and thread_id != ctx.thread_id:
            raise ValidationError("recall is limited to the current thread (retrieval.scope='thread')")
        thread = await self.storage.get_thread_by_id(thread_id)
        if thread is None or thread.resource_id != ctx.resource_id:
            # The same answer for a missing thread and another tenant's: nothing about it is revealed.
            raise ThreadOwnershipError(f"thread {thread_id!r} is not a thread of this resource")
        return thread

    async def _messages(self, ctx: MemoryContext, args: Mapping[str, Any], limit: int) -> dict[str, Any]:
        cursor = args.get("cursor")
        thread_arg = args.get("threadId", args.get("thread_id"))
        if isinstance(cursor, str) and ":" in cursor:
            return {
                "messages": "",
                "count": 0,
                "hint": "cursor is one message id: pass the start or the end id of the range, not the range",
            }
        thread_id = ctx.thread_id if thread_arg in (None, "current") else str(thread_arg)
        page = _int(args.get("page"), 1, "page") or 1
        if cursor:
            found = await self.storage.list_messages_by_id([str(cursor)])
            if not found or found[0].resource_id not in (None, ctx.resource_id):
                # One answer for a missing id and another tenant's: nothing about it is revealed.
                raise ThreadOwnershipError(f"cursor {cursor!r} is not a message of this resource")
            thread_id = found[0].thread_id
        await self._own_thread(ctx, thread_id)
        listed = await self.storage.list_messages(thread_id, resource_id=ctx.resource_id, per_page=False)
        messages = [m for m in listed.messages if m.role != "system"]
        if cursor:
            at = next(i for i, m in enumerate(messages) if m.id == cursor)
            # Page 1 starts at the cursor; negative pages read backwards from it (Mastra's paging).
            start = at + (page - 1) * limit if page > 0 else at + page * limit
        elif args.get("anchor") == "end":
            start = len(messages) - page * limit
        else:
            start = (page - 1) * limit
        start = max(start, 0)
        window = messages[start : start + limit]
        detail = args.get("detail") or "low"
        return {
            "messages": "\n\n".join(_render(m, detail) for m in window),
            "count": len(window),
            "cursor": cursor or (window[0].id if window else None),
            "page": page,
            "limit": limit,
            "detail": detail,
            "hasNextPage": start + limit < len(messages),
            "hasPrevPage": start > 0,
            "threadId": thread_id,
        }

    async def _threads(self, ctx: MemoryContext, page: int, limit: int) -> dict[str, Any]:
        if self.scope == "thread":
            raise ValidationError("recall is limited to the current thread (retrieval.scope='thread')")
        listed = await self.storage.list_threads(
            filter={"resource_id": ctx.resource_id}, page=page, per_page=limit
        )
        lines = [
            f"- {t.title or '(untitled)'} (id: {t.id}, created {canonical_timestamp(t.created_at)})"
            + ("  ← current" if t.id == ctx.thread_id else "")
            for t in listed.threads
        ]
        return {"threads": "\n".join(lines), "count": len(lines), "page": page, "hasMore": listed.has_more}

    async def _search(self, ctx: MemoryContext, query: Any, limit: int) -> dict[str, Any]:
        if self.index is None:
            raise ValidationError("recall mode 'search' needs retrieval={'vector': True}")
        flt = {"thread_id": ctx.thread_id} if self.scope == "thread" else None
        hits = await self.index.search(
            str(query or ""), resource_id=str(ctx.resource_id), top_k=limit, filter=flt
        )
        lines = []
        for hit in hits:
            cursor = (hit.range or "").split(":")[0]
            lines.append(
                f"- thread {hit.thread_id} (score {hit.score:.3f}, cursor {cursor}): {hit.text or ''}"
            )
        return {"results": "\n".join(lines), "count": len(hits)}


def _render(message: MastraDBMessage, detail: str) -> str:
    text = message_text(message)
    if detail != "high" and len(text) > LOW_DETAIL_CHARS:
        text = f"{text[:LOW_DETAIL_CHARS]}… (detail='high' for the rest)"
    return f"[{message.id}] {message.role} ({canonical_timestamp(message.created_at)}): {text}"


def _int(value: Any, default: int, name: str) -> int:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(f"{name} must be an integer, got {value!r}")
    return value
