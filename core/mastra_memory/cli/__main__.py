"""``python -m mastra_memory.cli``: the same as the ``mastra-memory`` command."""

from . import main

main()
