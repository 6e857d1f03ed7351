"""mastra-memory-dictstore: an example third-party vector store adapter for mastra-memory.

The store keeps every index in a Python dict and scores with numpy. It exists to show how an outside
author writes, registers and proves an adapter; it is not meant for production data.
"""

__version__ = "0.1.0"
