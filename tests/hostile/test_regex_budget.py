"""``$regex`` cannot freeze the process: evaluation is linear-time on every Python path (issue 12, finding 1).

Python's ``re`` backtracks exponentially on patterns such as ``(a+)+$`` while holding the GIL: over
``"a" * 30 + "!"`` it blocked the whole process for about a minute, and every extra character doubles
that. Each case runs in a fresh interpreter that is killed after ``_KILL_AFTER`` seconds — a thread
stuck in C code holding the GIL cannot be interrupted from inside — and asserts the exact answer
within ``_HANG_GUARD`` seconds over 5,000-character texts, where ``re`` would never finish. The bound
is a hang guard, not a speed requirement: the linear engine needs milliseconds.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from mastra_memory.errors import FilterError
from mastra_memory.filters import parse
from mastra_memory.filters.limits import MAX_REGEX_LENGTH, MAX_REGEX_NESTING
from mastra_memory.stores.sqlite.store import SQLiteVector

_HANG_GUARD = 2.0
_KILL_AFTER = 120.0
_N = 5_000

#: (pattern, options, text, whether re.search finds a match) — each one exponential for ``re``.
CATASTROPHIC = [
    ("(a+)+$", "", "a" * _N + "!", False),
    ("(a|a)+$", "", "a" * _N + "!", False),
    ("(a|aa)+$", "", "a" * _N + "!", False),
    ("(a*)*b", "", "a" * _N, False),
    ("^(([a-z])+.)+[A-Z]([a-z])+$", "", "a" * _N + "!", False),
    ("(.*a)+x", "s", "a\n" * (_N // 2), False),
    ("(A+)+$", "i", "a" * _N + "!", False),
    ("^(a+)+$", "m", ("a" * 50 + "!\n") * 100, False),
    ("(a+)+!$", "", "a" * _N + "!", True),
]


def _bounded(code: str) -> float:
    """Run ``code`` in a fresh interpreter (killed after ``_KILL_AFTER`` s); return the seconds it prints."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=_KILL_AFTER
        )
    except subprocess.TimeoutExpired:  # pragma: no cover - the regression this file guards against
        pytest.fail(f"regex evaluation hung: killed after {_KILL_AFTER} s")
    assert done.returncode == 0, done.stderr
    return float(done.stdout.split()[-1])


@pytest.mark.parametrize(("pattern", "options", "text", "expected"), CATASTROPHIC)
def test_the_reference_evaluator_is_linear(pattern: str, options: str, text: str, expected: bool) -> None:
    elapsed = _bounded(
        f"""
        import time
        from mastra_memory.filters import evaluate
        start = time.perf_counter()
        found = evaluate({{"s": {{"$regex": {pattern!r}, "$options": {options!r}}}}}, {{"s": {text!r}}})
        assert found is {expected!r}, found
        print(time.perf_counter() - start)
        """
    )
    assert elapsed < _HANG_GUARD


def test_the_sqlite_store_answers_a_catastrophic_filter_and_keeps_its_data() -> None:
    # The regex runs in SQLite's mastra_regexp SQL function on the store's single worker thread.
    elapsed = _bounded(
        f"""
        import asyncio, time
        from mastra_memory.stores.sqlite.store import SQLiteVector
        CASES = {CATASTROPHIC!r}

        async def main():
            store = SQLiteVector(":memory:")
            await store.create_index("idx", 3)
            texts = [text for _, _, text, _ in CASES]
            ids = [f"r{{i}}" for i in range(len(texts))]
            metadata = [{{"s": t, "k": i}} for i, t in enumerate(texts)]
            await store.upsert("idx", [[1, i, 0] for i in range(len(texts))], metadata, ids=ids)
            start = time.perf_counter()
            for i, (pattern, options, _, expected) in enumerate(CASES):
                regex = {{"$regex": pattern, "$options": options}}
                hits = await store.query("idx", [1, 0, 0], top_k=10, filter={{"s": regex, "k": i}})
                assert [h.id for h in hits] == ([ids[i]] if expected else []), (pattern, [h.id for h in hits])
                update = {{"metadata": metadata[i]}}
                await store.update_vector("idx", filter={{"s": regex, "k": i}}, update=update)
                await store.delete_vectors("idx", filter={{"s": regex, "k": -1}})
            elapsed = time.perf_counter() - start
            assert (await store.describe_index("idx")).count == len(texts)
            kept = {{h.id: h.metadata["s"] for h in await store.query("idx", None, top_k=100)}}
            assert kept == dict(zip(ids, texts, strict=True))
            await store.close()
            print(elapsed)

        asyncio.run(main())
        """
    )
    assert elapsed < _HANG_GUARD * len(CATASTROPHIC)


def test_the_lancedb_store_answers_a_catastrophic_filter(tmp_path: object) -> None:
    pytest.importorskip("mastra_memory_lancedb")
    elapsed = _bounded(
        f"""
        import asyncio, time
        from mastra_memory_lancedb.settings import LanceDBSettings
        from mastra_memory_lancedb.store import LanceDBVector

        async def main():
            store = LanceDBVector(LanceDBSettings(url={str(tmp_path)!r} + "/db"))
            await store.create_index("idx", 3)
            metadata = [{{"s": "a" * {_N} + "!"}}, {{"s": "ok"}}]
            await store.upsert("idx", [[1, 0, 0], [0, 1, 0]], metadata, ids=["evil", "ok"])
            start = time.perf_counter()
            hits = await store.query("idx", [1, 0, 0], top_k=10, filter={{"s": {{"$regex": "(a+)+$"}}}})
            assert hits == [], hits
            hits = await store.query("idx", [1, 0, 0], top_k=10, filter={{"s": {{"$regex": "(a+)+!$|^ok$"}}}})
            assert sorted(h.id for h in hits) == ["evil", "ok"], hits
            elapsed = time.perf_counter() - start
            assert (await store.describe_index("idx")).count == 2
            await store.close()
            print(elapsed)

        asyncio.run(main())
        """
    )
    assert elapsed < 2 * _HANG_GUARD


@pytest.mark.parametrize(
    ("pattern", "phrase"),
    [
        ("a" * 100_000, f"Regex pattern too long: 100,000 characters (limit {MAX_REGEX_LENGTH:,})"),
        ("a" * (MAX_REGEX_LENGTH + 1), f"Regex pattern too long: {MAX_REGEX_LENGTH + 1:,} characters"),
        # 499 nested groups fit in 1,000 characters; re.compile itself raised RecursionError on them.
        (
            "(" * 499 + "a" + ")" * 499,
            f"Regex nested too deeply: 499 levels of groups (limit {MAX_REGEX_NESTING})",
        ),
        ("(" * (MAX_REGEX_NESTING + 1) + ")" * (MAX_REGEX_NESTING + 1), "Regex nested too deeply: 33 levels"),
    ],
)
async def test_oversized_patterns_are_a_filter_error_before_io(pattern: str, phrase: str) -> None:
    with pytest.raises(FilterError) as info:
        parse({"s": {"$regex": pattern}})
    assert info.value.problems[0].startswith(phrase)
    store = SQLiteVector(":memory:")
    try:  # the index does not exist: a FilterError (not IndexNotFoundError) shows no I/O happened
        with pytest.raises(FilterError):
            await store.query("missing", [1.0, 0.0], top_k=1, filter={"s": {"$regex": pattern}})
    finally:
        await store.close()


def test_patterns_at_the_limits_are_accepted() -> None:
    assert parse({"s": {"$regex": "a" * MAX_REGEX_LENGTH}}) is not None
    nested = "(" * MAX_REGEX_NESTING + "a" + ")" * MAX_REGEX_NESTING
    assert parse({"s": {"$regex": nested}}) is not None
