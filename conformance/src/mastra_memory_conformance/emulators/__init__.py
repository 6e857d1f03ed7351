"""Local stand-ins for cloud backends that cannot run here (labelled ``emulated`` in every report).

Each emulator implements its service's *documented* behaviour on loopback, with its own small filter
evaluator written from the service's documentation — never the core's reference evaluator, so a
conformance run against an emulator is not the oracle checking itself (docs/spec.md §7, "Emulators").
"""
