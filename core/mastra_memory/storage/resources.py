"""Resource records of the ``MemoryStorage`` template: read, save and update one resource by id
(docs/spec.md §4.2).

``update_resource`` creates a missing resource; otherwise it replaces ``working_memory`` when given,
shallow-merges metadata and bumps ``updated_at`` (§4.5).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..timestamps import next_after, utc_now
from .arguments import non_blank, parse_model, validate_resource_patch
from .codec import json_text_or_none
from .hooks import StorageHooks
from .patches import merged_metadata
from .records import Resource, ResourceInput

__all__ = ["ResourceRecords"]


class ResourceRecords(StorageHooks):
    """``get_resource_by_id``, ``save_resource`` and ``update_resource``."""

    async def get_resource_by_id(self, resource_id: str) -> Resource | None:
        """The resource, or ``None``."""
        operation = "GET_RESOURCE_BY_ID"
        non_blank(resource_id, "resource_id", store=self.store_name, operation=operation)
        if not self._existing([resource_id]):
            return None
        return await self._run_unit(operation, lambda tx: self._load_resource(tx, resource_id), write=False)

    async def save_resource(self, resource: ResourceInput) -> Resource:
        """Insert or replace a resource by id; returns it as stored."""
        operation = "SAVE_RESOURCE"
        parsed = parse_model(
            Resource,
            resource,
            store=self.store_name,
            operation=operation,
            status="INVALID_ARGS",
            what="resource",
        )
        self._check_text(operation, (parsed.id, "resource id"), (parsed.working_memory, "working_memory"))
        json_text_or_none(parsed.metadata, f"metadata of resource {parsed.id}")
        await self._run_unit(operation, lambda tx: self._write_resource(tx, parsed), write=True)
        return parsed

    async def update_resource(
        self, resource_id: str, working_memory: str | None = None, metadata: Mapping[str, Any] | None = None
    ) -> Resource:
        """Create the resource if missing; else replace ``working_memory`` when given, shallow-merge
        ``metadata``, and bump ``updated_at``.
        """
        operation = "UPDATE_RESOURCE"
        validate_resource_patch(resource_id, working_memory, metadata, store=self.store_name)
        self._check_text(operation, (resource_id, "resource_id"), (working_memory, "working_memory"))
        json_text_or_none(metadata, "metadata")

        async def work(tx: Any) -> Resource:
            current = await self._load_resource(tx, resource_id, lock=True)
            if current is None:
                now = utc_now()
                resource = Resource(
                    id=resource_id,
                    working_memory=working_memory,
                    metadata=None if metadata is None else dict(metadata),
                    created_at=now,
                    updated_at=now,
                )
            else:
                resource = current.model_copy(
                    update={
                        "working_memory": current.working_memory
                        if working_memory is None
                        else working_memory,
                        "metadata": merged_metadata(current.metadata, metadata),
                        "updated_at": next_after(current.updated_at),
                    }
                )
            await self._write_resource(tx, resource)
            return resource

        return await self._run_unit(operation, work, write=True)
