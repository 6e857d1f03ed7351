"""Optional embedder extras: a missing package is a ConfigError naming the pip extra."""

from __future__ import annotations

import importlib.util

import pytest

from mastra_memory.embedders import resolve_embedder
from mastra_memory.embedders.local_model import require_extra
from mastra_memory.errors import ConfigError


@pytest.mark.parametrize(
    ("spec", "module", "extra", "model_id"),
    [
        (
            "sentence-transformers/all-mpnet-base-v2",
            "sentence_transformers",
            "sentence-transformers",
            "sentence-transformers/all-mpnet-base-v2",
        ),
        (
            "sentence-transformers",
            "sentence_transformers",
            "sentence-transformers",
            "sentence-transformers/all-MiniLM-L6-v2",
        ),
        ("fastembed/BAAI/bge-base-en-v1.5", "fastembed", "fastembed", "fastembed/BAAI/bge-base-en-v1.5"),
        ("fastembed", "fastembed", "fastembed", "fastembed/BAAI/bge-small-en-v1.5"),
    ],
)
def test_missing_extra_names_the_install_command(spec: str, module: str, extra: str, model_id: str) -> None:
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here, so the missing-extra path cannot run")

    with pytest.raises(ConfigError, match=rf'pip install "mastra-memory\[{extra}\]"') as info:
        resolve_embedder(spec)

    assert info.value.details == {"model_id": model_id, "extra": extra, "module": module}


def test_require_extra() -> None:
    require_extra("numpy", "unused", "test/model")  # installed: no error

    with pytest.raises(
        ConfigError, match=r"needs the optional package 'no_such_pkg_x'.*\"mastra-memory\[x\]\""
    ):
        require_extra("no_such_pkg_x", "x", "test/model")
