"""A strict local stand-in for Pinecone serverless (target ``pinecone-emulated``, kind ``emulated``).

Pinecone cannot run here (Pinecone Local is a closed container image), so the adapter brings this loopback
emulator: :mod:`.server` answers the official SDK's REST calls (:mod:`.rules`: the limits, ids and
metadata it checks), :mod:`.filters` evaluates Pinecone's
filter language as Pinecone documents it, independently of mastra-memory's reference evaluator -- never the
core's evaluator, so a conformance run against the emulator is not the oracle checking itself
(docs/spec.md §7, "Emulators"). It implements the service's *documented* behaviour on loopback, and every
report labels it ``emulated``.
What a pass against it proves, and what it does not, is written in docs/adapters/pinecone.md.
"""

from .filters import FilterRejected, check_filter, matches
from .server import API_VERSION, DEFAULT_API_KEY, PineconeEmulator, running_emulator

__all__ = [
    "API_VERSION",
    "DEFAULT_API_KEY",
    "FilterRejected",
    "PineconeEmulator",
    "check_filter",
    "matches",
    "running_emulator",
]
