"""``import mastra_memory`` stays cheap: no plugin machinery, no adapter, no CLI or optional extras.

Each check runs in a fresh interpreter, because this test process has long since imported everything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

OPTIONAL = ("rich", "typer", "click", "wordllama", "sentence_transformers", "fastembed", "torch")


def loaded_after(statement: str, autoload: bool = True) -> set[str]:
    """The modules a fresh interpreter holds after running ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted(sys.modules)))"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MASTRA_MEMORY_")}
    if not autoload:
        env["MASTRA_MEMORY_DISABLE_ENTRYPOINTS"] = "1"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    return set(json.loads(done.stdout))


def test_import_mastra_memory_loads_no_plugin_machinery_adapter_or_extra() -> None:
    modules = loaded_after("import mastra_memory")
    assert "pluggy" not in modules
    assert not {m for m in modules if m.startswith(("mastra_memory.plugins", "mastra_memory.hookspecs"))}
    assert not {m for m in modules if m.startswith("mastra_memory.stores.sqlite.")}  # the built-in plugin
    assert not {m for m in modules if m.startswith("mastra_memory_")}  # adapters, conformance kit
    assert not {m for m in modules if m == "mastra_memory.cli" or m.split(".")[0] in OPTIONAL}


@pytest.mark.parametrize("statement", ["import mastra_memory.plugins", "import mastra_memory.hookspecs"])
def test_plugin_modules_load_no_plugin_until_used(statement: str) -> None:
    modules = loaded_after(statement)
    assert "pluggy" in modules
    assert "mastra_memory.stores.sqlite.plugin" not in modules
    assert "mastra_memory.embedders.builtin" not in modules
    assert not {m for m in modules if m.startswith("mastra_memory_")}
    assert not {m for m in modules if m.split(".")[0] in OPTIONAL}


def test_built_in_plugins_load_without_their_stores() -> None:
    # Entry points off: installed adapters are not what this test measures.
    modules = loaded_after("import mastra_memory.plugins as p; p.get_plugin_manager()", autoload=False)
    assert "mastra_memory.stores.sqlite.plugin" in modules
    # The store classes are imported by the factories, on first create_vector/create_storage.
    assert "mastra_memory.stores.sqlite.store" not in modules
    assert "mastra_memory.stores.sqlite.storage" not in modules
    assert not {m for m in modules if m.split(".")[0] in OPTIONAL}
