"""Writing vectors: the single embedding write path, what a store can hold, re-indexing and chunking
(docs/spec.md §5.4-§5.6)."""
