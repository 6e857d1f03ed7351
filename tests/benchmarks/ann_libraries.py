"""Issue 28: hnswlib, usearch and faiss-cpu measured on the scale benchmark's vectors, before choosing one.

For each library: build time of an HNSW graph over the first ``--rows`` vectors of
``tests/benchmarks/scale.py``'s cached set (seeded, clustered, 384-d, unit), the index's size in memory or
on disk, then per search-list size ``ef``: query p50/p95 of the graph search plus an exact float32
re-ranking of its ``4 · k`` candidates, and recall@k of the re-ranked top-k against exact search.
Every library gets the same graph degree (M 16) and construction list (128) and the same 2 threads for
the build, one thread for queries. Numbers only.

Needs the libraries (faiss-cpu is this project's ``ann`` extra, which the sqlite store uses since;
hnswlib and usearch are not dependencies)::

    uv pip install hnswlib usearch faiss-cpu   # in any venv with numpy
    python tests/benchmarks/ann_libraries.py --rows 100k --libraries hnswlib,usearch,faiss
    python tests/benchmarks/ann_libraries.py --rows 100k --libraries faiss,faiss-fp16,faiss-int8

``faiss-fp16`` and ``faiss-int8`` hold the graph's vectors scalar-quantised (2 or 1 bytes a dimension instead
of 4): the recall a smaller graph costs before the same exact float32 re-ranking.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import _rows, queries, vectors

M = 16
EF_CONSTRUCTION = 128
EFS = (32, 64, 128, 256, 512)
THREADS = 2

Search = Callable[[npt.NDArray[np.float32], int, int], npt.NDArray[np.int64]]


def _hnswlib(data: npt.NDArray[np.float32], tmp: Path) -> tuple[Search, int]:
    import hnswlib

    index = hnswlib.Index(space="ip", dim=data.shape[1])
    index.init_index(max_elements=data.shape[0], M=M, ef_construction=EF_CONSTRUCTION)
    index.add_items(data, np.arange(data.shape[0]), num_threads=THREADS)
    path = tmp / "hnswlib.bin"
    index.save_index(str(path))
    index.set_num_threads(1)

    def search(q: npt.NDArray[np.float32], k: int, ef: int) -> npt.NDArray[np.int64]:
        index.set_ef(max(ef, k))
        labels, _ = index.knn_query(q, k=k)
        return labels[0].astype(np.int64)

    return search, path.stat().st_size


def _usearch(dtype: str) -> Callable[[npt.NDArray[np.float32], Path], tuple[Search, int]]:
    def build(data: npt.NDArray[np.float32], tmp: Path) -> tuple[Search, int]:
        from usearch.index import Index

        index = Index(
            ndim=data.shape[1], metric="ip", dtype=dtype, connectivity=M, expansion_add=EF_CONSTRUCTION
        )
        index.add(np.arange(data.shape[0]), data, threads=THREADS)
        path = tmp / f"usearch-{dtype}.bin"
        index.save(str(path))

        def search(q: npt.NDArray[np.float32], k: int, ef: int) -> npt.NDArray[np.int64]:
            index.expansion_search = max(ef, k)
            return np.asarray(index.search(q, k, threads=1).keys, dtype=np.int64)

        return search, path.stat().st_size

    return build


def _faiss(qtype: str | None) -> Callable[[npt.NDArray[np.float32], Path], tuple[Search, int]]:
    """faiss HNSW over float32 vectors (``qtype`` None: ``IndexHNSWFlat``, what the sqlite store uses) or
    scalar-quantised ones (``fp16``: 2 bytes a dimension, ``8bit``: 1, trained on the rows): what a float16
    or int8 graph would cost in recall before the exact float32 re-ranking."""

    def build(data: npt.NDArray[np.float32], tmp: Path) -> tuple[Search, int]:
        import faiss

        faiss.omp_set_num_threads(THREADS)
        if qtype is None:
            index = faiss.IndexHNSWFlat(data.shape[1], M, faiss.METRIC_INNER_PRODUCT)
        else:
            kind = getattr(faiss.ScalarQuantizer, f"QT_{qtype}")
            index = faiss.IndexHNSWSQ(data.shape[1], kind, M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        contiguous = np.ascontiguousarray(data)
        if qtype is not None:
            index.train(contiguous)
        index.add(contiguous)
        path = tmp / f"faiss-{qtype or 'flat'}.bin"
        faiss.write_index(index, str(path))
        faiss.omp_set_num_threads(1)

        def search(q: npt.NDArray[np.float32], k: int, ef: int) -> npt.NDArray[np.int64]:
            index.hnsw.efSearch = max(ef, k)
            _, labels = index.search(q.reshape(1, -1), k)
            return labels[0].astype(np.int64)

        return search, path.stat().st_size

    return build


LIBRARIES: dict[str, Callable[[npt.NDArray[np.float32], Path], tuple[Search, int]]] = {
    "hnswlib": _hnswlib,
    "usearch": _usearch("f32"),
    "usearch-i8": _usearch("i8"),
    "faiss": _faiss(None),
    "faiss-fp16": _faiss("fp16"),
    "faiss-int8": _faiss("8bit"),
}


def measure(name: str, data: npt.NDArray[np.float32], qs: npt.NDArray[np.float32], k: int) -> dict[str, Any]:
    truth = [set(np.argpartition(-(data @ q), k)[:k].tolist()) for q in qs]
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        search, size = LIBRARIES[name](data, Path(tmp))
        build_s = time.perf_counter() - t
    out: dict[str, Any] = {"library": name, "rows": data.shape[0], "build_s": build_s, "index_bytes": size}
    for ef in EFS:
        lat, hit = [], []
        for q, want in zip(qs, truth, strict=True):
            t = time.perf_counter()
            cand = search(q, 4 * k, ef)
            cand = cand[cand >= 0]
            scores = data[cand] @ q  # exact re-ranking of the candidates
            top = cand[np.argsort(-scores)[:k]]
            lat.append((time.perf_counter() - t) * 1e3)
            hit.append(len(want & set(top.tolist())) / k)
        out[f"ef{ef}"] = {
            "p50_ms": float(np.percentile(lat, 50)),
            "p95_ms": float(np.percentile(lat, 95)),
            f"recall_at_{k}": float(np.mean(hit)),
        }
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=_rows, default=100_000)
    p.add_argument("--source-rows", type=_rows, default=1_000_000, help="the cached set to take rows from")
    p.add_argument("--libraries", default="hnswlib,usearch,usearch-i8,faiss")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--cache", type=Path, default=Path("/tmp/mm-scale"))
    p.add_argument("--out", type=Path)
    args = p.parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))
    data = np.ascontiguousarray(vectors(args.cache, args.source_rows, 384)[: args.rows])
    qs = queries(data, np.arange(args.rows, dtype=np.int64), args.queries)
    results = []
    for name in args.libraries.split(","):
        result = measure(name, data, qs, args.k)
        print(json.dumps(result), flush=True)
        results.append(result)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
