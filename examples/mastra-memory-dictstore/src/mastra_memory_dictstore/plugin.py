"""The hook implementations mastra-memory finds through the entry point ``dictstore``.

Kept light: mastra-memory imports this module whenever it builds its plugin manager, so the store is
imported only when it is used (``create_vector("dictstore", space="demo")``). The conformance target
registers with the kit, from ``testing/targets.py``.
"""

from __future__ import annotations

from mastra_memory.plugins.store_plugin import StorePlugin

from .settings import DictStoreSettings

PLUGIN = StorePlugin("dictstore", DictStoreSettings, vector=".store:DictStoreVector")
register_vector_stores = PLUGIN.register_vector_stores
