"""mastra-memory conformance kit: shared datasets and oracle comparisons for every adapter."""
