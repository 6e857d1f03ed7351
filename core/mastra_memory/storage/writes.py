"""Message writes of the ``MemoryStorage`` template (docs/spec.md §4.5): one transaction each.

Saving checks every message before any I/O, then fills ``resource_id`` from the thread and refuses a
different one; updating merges ``content`` one level and ``content.metadata`` one level deeper; every
write bumps ``updated_at`` of each thread it touches to ``max(now, previous + 1 ms)``. No write touches a
thread or message of another resource than the one it names (ThreadOwnershipError, "ownership" in §4.5):
every check runs inside the unit of work before its first write, so a refused batch writes nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..errors import ValidationError
from ..messages import MastraDBMessage, MessageInput, normalize_messages
from ..timestamps import next_after, utc_now
from .arguments import parse_model, validate_list, validate_message_ids, validate_resource_id
from .hooks import StorageHooks
from .patches import merged_content
from .records import MessageUpdate, MessageUpdateInput, Thread

__all__ = ["MessageWrites"]


class MessageWrites(StorageHooks):
    """``save_messages``, ``update_messages`` and ``delete_messages``."""

    async def _owners(
        self, tx: Any, messages: Iterable[MastraDBMessage], loaded: Mapping[str, Thread]
    ) -> dict[str, str | None]:
        """The resource owning each stored message: its ``resource_id``, else its thread's (a row written
        without one); ``None`` when neither is known. ``loaded`` holds threads this unit already read."""
        stored = list(messages)
        unknown = sorted({m.thread_id for m in stored if m.resource_id is None} - loaded.keys())
        threads = {**loaded, **(await self._load_threads(tx, unknown) if unknown else {})}
        owners: dict[str, str | None] = {}
        for message in stored:
            thread = threads.get(message.thread_id)
            owners[message.id] = message.resource_id or (thread.resource_id if thread else None)
        return owners

    async def _bump(
        self, tx: Any, thread_ids: Iterable[str], loaded: Mapping[str, Thread] | None = None
    ) -> None:
        """Set ``updated_at = max(now, previous + 1 ms)`` on each existing thread (docs/spec.md §4.5).

        ``loaded`` holds threads this unit already read with ``lock=True``; only the others are read.
        """
        wanted = set(thread_ids)
        known = {i: t for i, t in (loaded or {}).items() if i in wanted}
        missing = sorted(wanted - known.keys())  # one lock order for every writer: no deadlocks
        threads = {**known, **(await self._load_threads(tx, missing, lock=True) if missing else {})}
        now = utc_now()
        for thread_id in sorted(threads):
            thread = threads[thread_id]
            await self._write_thread(
                tx, thread.model_copy(update={"updated_at": next_after(thread.updated_at, now)})
            )

    async def save_messages(self, messages: Sequence[MessageInput]) -> list[MastraDBMessage]:
        """Upsert messages by id in one transaction (docs/spec.md §4.5) and return them as stored.

        Input may be v2, legacy v1 or camelCase (see `normalize_messages`). Each message needs an
        existing thread (ThreadNotFoundError); a missing ``resource_id`` is taken from the thread and a
        different one is a ThreadOwnershipError. An existing id is replaced, moving it if its thread
        changed; an existing id of another resource is a ThreadOwnershipError. If anything is invalid or
        refused, nothing is saved.
        """
        operation = "SAVE_MESSAGES"
        validate_list(messages, "messages", store=self.store_name, operation=operation)
        try:
            normalized = normalize_messages(messages)
        except ValidationError as exc:
            exc.id, exc.domain = self._error_id(operation, "INVALID_MESSAGE"), "STORAGE"
            raise
        if not normalized:
            return []
        for message in normalized:
            if not message.thread_id.strip():
                raise self._no_thread(
                    operation,
                    f"message {message.id} has no thread_id; every message must belong to an existing thread",
                )
            self._check_text(
                operation,
                (message.id, "message id"),
                (message.thread_id, "thread_id"),
                (message.resource_id, "resource_id"),
                (message.role, "role"),
                (message.type, "type"),
            )
        contents = [self._encode_content(m) for m in normalized]

        async def work(tx: Any) -> list[MastraDBMessage]:
            threads = await self._load_threads(tx, sorted({m.thread_id for m in normalized}), lock=True)
            stored: list[MastraDBMessage] = []
            for message in normalized:
                thread = threads.get(message.thread_id)
                if thread is None:
                    raise self._no_thread(
                        operation,
                        f"thread {message.thread_id} does not exist; create it before saving messages to it",
                        thread_id=message.thread_id,
                        message_id=message.id,
                    )
                if message.resource_id is None:
                    message = message.model_copy(update={"resource_id": thread.resource_id})
                elif message.resource_id != thread.resource_id:
                    raise self._not_owned(
                        operation,
                        f"message {message.id} has resource_id {message.resource_id!r} but thread "
                        f"{message.thread_id} belongs to another resource; save it to a thread of "
                        f"{message.resource_id!r}, or omit resource_id to take the thread's",
                        thread_id=message.thread_id,
                        message_id=message.id,
                    )
                stored.append(message)
            # docs/spec.md §4.5 ownership: an existing id is replaced only by a save of its own resource.
            existing = await self._find_by_id(tx, list(dict.fromkeys(m.id for m in stored)))
            owners = await self._owners(tx, existing, threads)
            for message in stored:
                owner = owners.get(message.id)
                if owner is not None and owner != message.resource_id:
                    raise self._not_owned(
                        operation,
                        f"message {message.id} already exists and belongs to another resource; "
                        "save it under a new id",
                        message_id=message.id,
                    )
            await self._write_messages(tx, list(zip(stored, contents, strict=True)))
            await self._bump(tx, {m.thread_id for m in stored} | {m.thread_id for m in existing}, threads)
            return list({m.id: m for m in stored}.values())

        return await self._run_unit(operation, work, write=True)

    async def update_messages(
        self, updates: Sequence[MessageUpdateInput], *, resource_id: str | None = None
    ) -> list[MastraDBMessage]:
        """Apply partial updates in one transaction and return the updated messages (docs/spec.md §4.5).

        Only given fields change. ``content`` is merged one level (given keys replace stored ones) and
        ``content.metadata`` one level deeper. A new ``thread_id`` moves the message to another thread of
        its resource; a thread of another resource is a ThreadOwnershipError. With ``resource_id``, every
        existing message updated must belong to that resource (else ThreadOwnershipError). Unknown ids
        are ignored. If anything is invalid or refused, nothing is written.
        """
        operation = "UPDATE_MESSAGES"
        resource = validate_resource_id(resource_id, store=self.store_name, operation=operation)
        validate_list(updates, "updates", store=self.store_name, operation=operation)
        parsed = [
            parse_model(
                MessageUpdate,
                u,
                store=self.store_name,
                operation=operation,
                status="INVALID_ARGS",
                what=f"update [{i}]",
            )
            for i, u in enumerate(updates)
        ]
        if not parsed:
            return []
        for update in parsed:
            self._check_text(
                operation, (update.role, "role"), (update.type, "type"), (update.thread_id, "thread_id")
            )

        async def work(tx: Any) -> list[MastraDBMessage]:
            ids = self._existing(dict.fromkeys(u.id for u in parsed))
            stored = {m.id: m for m in await self._find_by_id(tx, ids, lock=True)}
            owners = await self._owners(tx, stored.values(), {})
            if resource is not None:
                for update in parsed:
                    if update.id in stored and owners[update.id] != resource:
                        raise self._not_owned(
                            operation,
                            f"message {update.id} belongs to another resource than {resource!r}; "
                            "update only messages of the resource you name",
                            message_id=update.id,
                        )
            # Every update is applied and checked before the first write, so a refused one writes nothing.
            updated: dict[str, MastraDBMessage] = {}
            bumped: set[str] = set()
            for update in parsed:
                current = updated.get(update.id) or stored.get(update.id)
                if current is None:
                    continue
                message = await self._apply_update(tx, current, update, operation, owners[update.id])
                bumped |= {current.thread_id, message.thread_id}
                updated[message.id] = message
            await self._write_messages(tx, [(m, self._encode_content(m)) for m in updated.values()])
            await self._bump(tx, bumped)
            return list(updated.values())

        return await self._run_unit(operation, work, write=True)

    async def _apply_update(
        self, tx: Any, current: MastraDBMessage, update: MessageUpdate, operation: str, owner: str | None
    ) -> MastraDBMessage:
        changes: dict[str, Any] = {}
        if update.content is not None:
            changes["content"] = merged_content(
                current, update.content, store=self.store_name, operation=operation
            )
        if update.role is not None:
            changes["role"] = update.role
        if update.type is not None:
            changes["type"] = update.type
        if update.created_at is not None:
            changes["created_at"] = update.created_at
        if update.thread_id is not None and update.thread_id != current.thread_id:
            thread = await self._load_thread(tx, update.thread_id)
            if thread is None:
                raise self._no_thread(
                    operation,
                    f"thread {update.thread_id} does not exist; cannot move message {update.id} to it",
                )
            if owner is not None and thread.resource_id != owner:
                raise self._not_owned(
                    operation,
                    f"thread {thread.id} belongs to another resource than message {update.id}; a message "
                    "moves only between threads of its own resource",
                    thread_id=thread.id,
                    message_id=update.id,
                )
            changes["thread_id"] = thread.id
            changes["resource_id"] = thread.resource_id
        return current.model_copy(update=changes)

    async def delete_messages(self, message_ids: Sequence[str]) -> None:
        """Delete messages in one transaction and bump each thread that lost one; unknown ids are ignored."""
        operation = "DELETE_MESSAGES"
        ids = self._existing(validate_message_ids(message_ids, store=self.store_name, operation=operation))
        if not ids:
            return

        async def work(tx: Any) -> None:
            await self._bump(tx, await self._delete_messages(tx, ids))

        await self._run_unit(operation, work, write=True)
