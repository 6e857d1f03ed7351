"""Fixtures: the adapter's Pinecone emulator on loopback, and stores pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from mastra_memory_pinecone.settings import PineconeSettings
from mastra_memory_pinecone.store import PineconeVector
from mastra_memory_pinecone.testing.emulator import PineconeEmulator, running_emulator

#: Long enough that a read that forgets to wait sees nothing, short enough to keep tests quick.
DELAY = 0.2


@pytest.fixture
def emulator() -> Iterator[PineconeEmulator]:
    with running_emulator(visibility_delay=DELAY) as emu:
        yield emu


def settings_for(emu: PineconeEmulator, **extra: object) -> PineconeSettings:
    return PineconeSettings(api_key=emu.api_key, controller_host_url=emu.url, wait_timeout=10, **extra)


@pytest.fixture
async def store(emulator: PineconeEmulator) -> AsyncIterator[PineconeVector]:
    vector = PineconeVector(settings_for(emulator))
    try:
        yield vector
    finally:
        await vector.close()
