"""Tests of the conformance kit itself: the override guard, targets, the report, the socket guard, and
the proof that a deliberately broken translator fails the kit."""
