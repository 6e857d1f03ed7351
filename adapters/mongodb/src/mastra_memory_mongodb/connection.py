"""One pymongo ``AsyncMongoClient`` per store and event loop, what the server is, and error mapping.

pymongo's async client belongs to the event loop that first used it, so a store used from another loop
(``mastra_memory.sync`` runs each call on its own loop) gets a new client there; the old one is closed
when its loop is still running, else dropped. The first use of a client asks the server who it is
(``buildInfo``, ``hello``): FerretDB answers with ``ferretdbVersion``; a replica set or ``mongos``
supports transactions. A store configured for ``dialect="mongodb"`` refuses to run on FerretDB, whose
answers to some MQL differ (see :mod:`.capabilities`).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any, Final

from mastra_memory.errors import CapabilityError
from pymongo import AsyncMongoClient
from pymongo.asynchronous.database import AsyncDatabase
from pymongo.errors import ConnectionFailure, ExecutionTimeout, PyMongoError, ServerSelectionTimeoutError

from .settings import MongoDBSettings

__all__ = ["Connection", "ServerInfo", "is_transient"]

Document = dict[str, Any]
_SETUP_ERRORS: Final = (PyMongoError, OSError)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    """What the server said about itself on first use."""

    version: str
    ferretdb: str | None
    transactions: bool


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` means the server could not be reached or the operation ran out of time."""
    return isinstance(exc, (ConnectionFailure, ServerSelectionTimeoutError, ExecutionTimeout)) or (
        isinstance(exc, PyMongoError) and exc.timeout
    )


class Connection:
    """The client, database and server facts of one store."""

    def __init__(self, settings: MongoDBSettings) -> None:
        self.settings = settings
        self.where = settings.describe()
        self._client: AsyncMongoClient[Document] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._info: ServerInfo | None = None
        self._lock: asyncio.Lock | None = None

    async def database(self) -> AsyncDatabase[Document]:
        """The database, connecting (and learning about the server) on first use in this loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            await self._drop_client()
            self._client = AsyncMongoClient(self.settings.url, **self.settings.client_options())
            self._loop = loop
            self._lock = asyncio.Lock()
        if self._info is None:
            assert self._lock is not None
            async with self._lock:
                if self._info is None:
                    self._info = await self._server_info(self._client)
        return self._client[self.settings.db_name]

    @property
    def client(self) -> AsyncMongoClient[Document]:
        assert self._client is not None, "call database() first"
        return self._client

    @property
    def info(self) -> ServerInfo:
        assert self._info is not None, "call database() first"
        return self._info

    async def _server_info(self, client: AsyncMongoClient[Document]) -> ServerInfo:
        build = await client.admin.command("buildInfo")
        hello = await client.admin.command("hello")
        ferretdb = build.get("ferretdbVersion")
        if ferretdb is not None and self.settings.dialect != "ferretdb":
            raise CapabilityError(
                f"the server at {self.where} is FerretDB {ferretdb}, which answers some MQL differently "
                "from MongoDB ($elemMatch over documents, missing paths through lists); set "
                "dialect='ferretdb' (MASTRA_MEMORY_MONGODB_DIALECT=ferretdb) so the adapter decides those "
                "filter parts itself"
            )
        replicated = "setName" in hello or hello.get("msg") == "isdbgrid"
        return ServerInfo(
            version=str(build.get("version", "")),
            ferretdb=None if ferretdb is None else str(ferretdb),
            transactions=ferretdb is None and replicated and "logicalSessionTimeoutMinutes" in hello,
        )

    async def _drop_client(self) -> None:
        client, loop = self._client, self._loop
        self._client = self._loop = None
        if client is None:
            return
        if loop is asyncio.get_running_loop():
            await client.close()
        elif loop is not None and loop.is_running() and not loop.is_closed():
            asyncio.run_coroutine_threadsafe(client.close(), loop)

    async def close(self) -> None:
        """Close the client; the next call reconnects."""
        await self._drop_client()
        self._info = None
