"""Reading memory: the one recall algorithm (docs/spec.md §5.3, §6.2), its semantic search and the
cross-thread system message (§6.3)."""
