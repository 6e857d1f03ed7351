"""A linear-time matcher for the portable ``$regex`` subset (docs/spec.md §2.5) of :mod:`.regex`.

Why not ``re``
--------------
The meaning of ``$regex`` is Python's ``re.search`` (docs/spec.md §2.5), but ``re`` is a backtracking
engine: ``(a+)+$`` over ``"a" * 30 + "!"`` takes about a minute, every extra character doubles it, and the
whole time it holds the GIL, so no timeout fires and every other request of the process stalls. Filters
and stored texts are written by tenants, so every place that evaluates ``$regex`` in Python — the
reference evaluator, the SQLite store's ``mastra_regexp`` SQL function, LanceDB's exact re-check — uses
:class:`PortableRegex` instead, through :func:`compile_regex`.

How it works
------------
The portable subset has no backreferences or lookaround, so it is regular: every pattern is compiled to a
Thompson NFA and simulated Pike-style, all alive states at once, so a search costs O(len(text) ×
len(pattern)) whatever the pattern and text. Whether a search *finds* a match does not depend on the order
a backtracking engine tries alternatives in — greediness only chooses *which* match — so the state-set
simulation answers exactly what ``re.search(...) is not None`` answers. Two details keep it exactly Python's:

* Each single-character atom (a literal, an escaped character, ``.``, a bracket class) is decided by Python's
  own ``re`` on that one character, with the same ``i``/``s`` flags (``fullmatch`` of the atom's source), and
  the answer is cached per (atom, character). Case folding (``ſ`` ~ ``s``, ``K`` ~ ``k``), class ranges under
  ``i`` and negated classes are therefore Python's by construction, and lone surrogates are just characters.
* ``^`` and ``$`` are assertions on the position with Python's rules: without ``m``, ``^`` holds at 0 and
  ``$`` at the end or before a final ``"\\n"``; with ``m``, ``^`` holds at 0 and after every ``"\\n"``, ``$``
  before every ``"\\n"`` and at the end.

For speed the sets of NFA states (bit masks) are interned as states of a lazily built DFA whose transitions
are cached per (state, character[, position context]), so a typical search costs one dictionary lookup per
character. The cache is bounded (``_MAX_DFA_STATES``, ``_MAX_DFA_TRANSITIONS``): a pattern whose DFA would
be larger simply starts over with an empty cache, which keeps memory bounded and time linear.

``google-re2`` was considered and rejected: its ``$`` does not match before a trailing newline, its case
folding is not Python's, and it cannot take strings with lone surrogates.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache
from itertools import pairwise
from typing import Final, Literal

_QUANTIFIERS = frozenset("*+?")


def _class_end(pattern: str, start: int) -> int:
    """The index just after the ``]`` closing the bracket class at ``start`` (``len`` if unterminated).

    Python's rule: a ``]`` right after ``[`` or ``[^`` is a member, ``\\`` escapes the next character.
    """
    i = start + 1
    if pattern.startswith("^", i):
        i += 1
    if pattern.startswith("]", i):
        i += 1
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "]":
            return i + 1
        i += 2 if c == "\\" else 1
    return n


# A parsed pattern: ("atom", source) | ("assert", bit) | ("cat", items) | ("alt", branches)
# | ("star" | "plus" | "opt", item).
_Tree = tuple[str, object]

# Position context bits: which assertion holds at a position (``^`` and ``$``, in the pattern's mode).
_AT_START: Final = 1
_AT_END: Final = 2

# NFA state kinds; state 0 is always the one MATCH state, so bit 0 of a state set means "matched".
_MATCH: Final = 0
_CHAR: Final = 1
_SPLIT: Final = 2
_ASSERT: Final = 3

_MAX_DFA_STATES: Final = 512
_MAX_DFA_TRANSITIONS: Final = 4_096
_MAX_ACCEPT_CACHE: Final = 4_096


@lru_cache(maxsize=4_096)
def _atom_pattern(source: str, flags: int) -> re.Pattern[str]:
    return re.compile(source, flags)


@lru_cache(maxsize=65_536)
def _atom_matches(source: str, flags: int, char: str) -> bool:
    """Whether the single-character atom ``source`` matches ``char``: Python's own answer."""
    return _atom_pattern(source, flags).fullmatch(char) is not None


class _TreeParser:
    """Parses a pattern that passed :func:`regex_problems` (recursion only per group: ≤ the nesting limit)."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.i = 0

    def parse(self) -> _Tree:
        tree = self.alternation()
        if self.i != len(self.pattern):  # pragma: no cover - regex_problems ran re.compile first
            raise ValueError(f"unbalanced pattern: {self.pattern!r}")
        return tree

    def alternation(self) -> _Tree:
        branches = [self.sequence()]
        while self.pattern.startswith("|", self.i):
            self.i += 1
            branches.append(self.sequence())
        return branches[0] if len(branches) == 1 else ("alt", branches)

    def sequence(self) -> _Tree:
        pattern = self.pattern
        items: list[_Tree] = []
        while self.i < len(pattern) and pattern[self.i] not in "|)":
            item = self.atom()
            if self.i < len(pattern) and pattern[self.i] in _QUANTIFIERS:
                item = ({"*": "star", "+": "plus", "?": "opt"}[pattern[self.i]], item)
                self.i += 1
            items.append(item)
        return items[0] if len(items) == 1 else ("cat", items)

    def atom(self) -> _Tree:
        pattern, i = self.pattern, self.i
        c = pattern[i]
        if c == "(":
            self.i += 1
            inner = self.alternation()
            if not pattern.startswith(")", self.i):  # pragma: no cover - re.compile ran first
                raise ValueError(f"unbalanced pattern: {pattern!r}")
            self.i += 1
            return inner
        if c == "[":
            self.i = _class_end(pattern, i)
            return ("atom", pattern[i : self.i])
        if c == "\\":
            self.i += 2
            return ("atom", pattern[i : i + 2])
        self.i += 1
        if c == "^":
            return ("assert", _AT_START)
        if c == "$":
            return ("assert", _AT_END)
        return ("atom", "." if c == "." else re.escape(c))


class _Dfa:
    """The lazily built DFA: interned NFA state sets and their cached transitions."""

    __slots__ = ("ids", "masks", "rows", "size")

    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.masks: list[int] = []
        self.rows: list[dict[object, int]] = []
        self.size = 0


class PortableRegex:
    """A compiled portable ``$regex``: :meth:`search` answers ``re.search`` in linear time.

    Thread-safe; build it with :func:`compile_regex`, which validates and caches.
    """

    def __init__(self, pattern: str, options: str = "") -> None:
        self.pattern = pattern
        self.options = options
        self._flags = (re.IGNORECASE if "i" in options else 0) | (re.DOTALL if "s" in options else 0)
        self._multiline = "m" in options
        self._kind: list[int] = [_MATCH]
        self._out: list[list[int]] = [[]]
        self._arg: list[int] = [0]
        self._atom_sources: list[str] = []
        self._atom_bits: list[int] = []
        atom_index: dict[str, int] = {}
        self._start_state = self._build(_TreeParser(pattern).parse(), 0, atom_index)
        self._anchored = _ASSERT in self._kind
        self._starts: dict[int, int] = {}
        self._successors: dict[tuple[int, int], int] = {}
        self._accepting: dict[str, int] = {}
        self._lock = threading.Lock()
        self._dfa = _Dfa()
        # Without ``m`` the start context occurs only at position 0: once no state is alive and the
        # pattern cannot start anywhere else, nothing can match any more.
        self._restartable = self._multiline or bool(self._start(0) | self._start(_AT_END))

    def __repr__(self) -> str:
        return f"PortableRegex({self.pattern!r}, {self.options!r})"

    # --- construction --------------------------------------------------------------------------

    def _state(self, kind: int, out: list[int], arg: int = 0) -> int:
        self._kind.append(kind)
        self._out.append(out)
        self._arg.append(arg)
        return len(self._kind) - 1

    def _build(self, tree: _Tree, following: int, atom_index: dict[str, int]) -> int:
        """The start state of ``tree`` compiled to continue at ``following`` (Thompson's construction)."""
        kind, value = tree
        if kind == "atom":
            assert isinstance(value, str)
            state = self._state(_CHAR, [following])
            index = atom_index.setdefault(value, len(self._atom_sources))
            if index == len(self._atom_sources):
                self._atom_sources.append(value)
                self._atom_bits.append(0)
            self._arg[state] = index
            self._atom_bits[index] |= 1 << state
            return state
        if kind == "assert":
            assert isinstance(value, int)
            return self._state(_ASSERT, [following], value)
        if kind == "cat":
            assert isinstance(value, list)
            state = following
            for item in reversed(value):
                state = self._build(item, state, atom_index)
            return state
        if kind == "alt":
            assert isinstance(value, list)
            return self._state(_SPLIT, [self._build(branch, following, atom_index) for branch in value])
        assert isinstance(value, tuple)
        if kind == "opt":
            return self._state(_SPLIT, [self._build(value, following, atom_index), following])
        loop = self._state(_SPLIT, [following, following])
        body = self._build(value, loop, atom_index)
        self._out[loop][0] = body
        return loop if kind == "star" else body  # "plus": the body once, then the loop

    # --- simulation ----------------------------------------------------------------------------

    def _closure(self, state: int, context: int) -> int:
        """The CHAR and MATCH states reachable from ``state`` without input, as a bit mask."""
        kind, out, arg = self._kind, self._out, self._arg
        mask = 0
        seen: set[int] = set()
        stack = [state]
        while stack:
            current = stack.pop()
            if current in seen:
                continue
            seen.add(current)
            k = kind[current]
            if k in (_CHAR, _MATCH):
                mask |= 1 << current
            elif k == _SPLIT:
                stack.extend(out[current])
            elif arg[current] & context:
                stack.append(out[current][0])
        return mask

    def _start(self, context: int) -> int:
        mask = self._starts.get(context)
        if mask is None:
            mask = self._starts[context] = self._closure(self._start_state, context)
        return mask

    def _accepts(self, char: str) -> int:
        """The CHAR states whose atom matches ``char``."""
        mask = self._accepting.get(char)
        if mask is None:
            mask = 0
            for source, bits in zip(self._atom_sources, self._atom_bits, strict=True):
                if _atom_matches(source, self._flags, char):
                    mask |= bits
            if len(self._accepting) >= _MAX_ACCEPT_CACHE:
                self._accepting.clear()
            self._accepting[char] = mask
        return mask

    def _step(self, mask: int, char: str, context: int) -> int:
        """The state set after reading ``char`` from ``mask``, at a position with ``context``.

        The start closure is added at every position: an unanchored search may begin anywhere.
        """
        consumed = mask & self._accepts(char)
        result = self._start(context)
        successors = self._successors
        while consumed:
            low = consumed & -consumed
            state = low.bit_length() - 1
            consumed ^= low
            key = (state, context)
            after = successors.get(key)
            if after is None:
                after = successors[key] = self._closure(self._out[state][0], context)
            result |= after
        return result

    def _intern(self, mask: int) -> tuple[_Dfa, int]:
        with self._lock:
            dfa = self._dfa
            if len(dfa.masks) >= _MAX_DFA_STATES or dfa.size >= _MAX_DFA_TRANSITIONS:
                dfa = self._dfa = _Dfa()  # start over: bounded memory, still linear time
            state = dfa.ids.get(mask)
            if state is None:
                state = dfa.ids[mask] = len(dfa.masks)
                dfa.masks.append(mask)
                dfa.rows.append({})
            return dfa, state

    def _context(self, text: str, position: int) -> int:
        """Which of ``^`` and ``$`` hold at ``position`` of ``text`` (Python's rules, per ``m``)."""
        n = len(text)
        context = 0
        if self._multiline:
            if position == 0 or text[position - 1] == "\n":
                context |= _AT_START
            if position == n or text[position] == "\n":
                context |= _AT_END
        else:
            if position == 0:
                context |= _AT_START
            if position == n or (position == n - 1 and text[position] == "\n"):
                context |= _AT_END
        return context

    def _miss(self, dfa: _Dfa, state: int, char: str, key: object, context: int) -> tuple[_Dfa, int]:
        """Compute, intern and cache the transition of ``state`` on ``char`` (at a ``context`` position)."""
        new_dfa, following = self._intern(self._step(dfa.masks[state], char, context))
        if new_dfa is dfa:
            dfa.rows[state][key] = following
            dfa.size += 1
        return new_dfa, following

    def search(self, text: str) -> Literal[True] | None:
        """``True`` if the pattern matches somewhere in ``text`` (as ``re.search``), else ``None``.

        The hot loops read one cached transition per character; the position context ``^``/``$`` need is
        computed only where it can be non-zero (next to a newline with ``m``, the last two positions
        without it), and transitions at such positions are cached under ``(char, context)``.
        """
        if not isinstance(text, str):
            raise TypeError(f"expected a string, got {type(text).__name__}")
        n = len(text)
        anchored, restartable = self._anchored, self._restartable
        dfa, state = self._intern(self._start(self._context(text, 0) if anchored else 0))
        if dfa.masks[state] & 1:
            return True
        masks, rows = dfa.masks, dfa.rows
        if anchored and self._multiline:
            # Position q = p + 1 < n: ``^`` holds after a newline, ``$`` before one.
            for char, after in pairwise(text):
                context = (_AT_START if char == "\n" else 0) | (_AT_END if after == "\n" else 0)
                key: object = (char, context) if context else char
                following = rows[state].get(key)
                if following is None:
                    dfa, following = self._miss(dfa, state, char, key, context)
                    masks, rows = dfa.masks, dfa.rows
                if masks[following] & 1:
                    return True
                state = following
            tail = max(n - 1, 0)
        else:
            # No assertion, or ``^``/``$`` without ``m``: the context is 0 up to position n - 2.
            tail = max(n - 2, 0) if anchored else n
            for char in text if tail == n else text[:tail]:
                following = rows[state].get(char)
                if following is None:
                    dfa, following = self._miss(dfa, state, char, char, 0)
                    masks, rows = dfa.masks, dfa.rows
                mask = masks[following]
                if mask & 1:
                    return True
                if not mask and not restartable:
                    return None
                state = following
        for position in range(tail, n):
            char = text[position]
            context = self._context(text, position + 1)
            key = (char, context) if context else char
            following = rows[state].get(key)
            if following is None:
                dfa, following = self._miss(dfa, state, char, key, context)
                masks, rows = dfa.masks, dfa.rows
            if masks[following] & 1:
                return True
            state = following
        return None
