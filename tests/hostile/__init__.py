"""Hostile input over the public API (issue 12): each class of attack that once froze, crashed or
corrupted a store, replayed so it stays closed. Every case asserts a typed error (or the exact answer)
within a wall-clock bound, and that previously stored data is intact afterwards."""
