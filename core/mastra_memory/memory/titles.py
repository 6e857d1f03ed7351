"""Thread title generation (docs/spec.md §5.9): after a save, in the background, never failing it.

What runs follows Mastra 1.31's agent (its ``generateTitle``): when the thread has no title, the messages of
the turn's context (the history ``last_messages`` loads plus the messages just saved) number at least
``min_messages`` and one of them is the user's, the context is written as a transcript (``User: …`` /
``Assistant: …`` lines) and sent to the title model as the user message, after the instructions as the
system message; ``<think>`` blocks are cut from the reply and the rest, trimmed, is the title. A title
that is set, or marked pinned (``metadata.titlePinned``), is never overwritten.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..messages import (
    MastraDBMessage,
    ReasoningPart,
    SourceUrlPart,
    TextPart,
    ToolInvocationPart,
)
from ..models import ChatModel, ModelUsage, Usage, resolve_model
from ..storage import MemoryStorage
from .config import MemoryConfig

# Title warnings and failures are logged as ``Memory``'s (the logger tests and users filter on).
logger = logging.getLogger("mastra_memory.memory")

#: Mastra's thread-metadata key for a title the user set by hand (docs/spec.md §5.9).
TITLE_PINNED = "titlePinned"

#: The system message when ``instructions`` is not set: the same rules as Mastra's default, own words.
DEFAULT_TITLE_INSTRUCTIONS = """\
- Write a short title for the conversation transcript below, between a user and an assistant.
- Lines start with "User:" or "Assistant:"; do not answer or continue the conversation.
- Always write a title, even for a greeting or a trivial exchange.
- Keep it to 80 characters at most.
- Summarise what the user asked about.
- Use no quotes and no colons.
- Everything you reply becomes the title."""

_THINK = re.compile(r"<think>[\s\S]*?</think>")
# Mastra cuts a tool's arguments or result to this many characters in the transcript.
_TOOL_TEXT = 200
_URL_TEXT = 100

TitleModel = ChatModel | Callable[..., Any]


class TitleGenerator:
    """Schedules and runs title generation for the threads of saved messages; ``usage`` counts the
    title model's calls, failures and tokens."""

    def __init__(self, storage: MemoryStorage) -> None:
        self.storage = storage
        self.usage = ModelUsage()
        self._tasks: set[asyncio.Task[None]] = set()
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}  # lock and its users
        self._resolved: dict[str, ChatModel] = {}
        self._warned = False

    def model(self, cfg: MemoryConfig) -> TitleModel | None:
        """The title model when titles are on (a ``ChatModel``, resolved from a model-router string or
        Mastra's ``{id, url}`` config, or a plain callable); None, after one warning, when none is set.

        Raises:
            ConfigError: a model string or config that cannot be resolved.
        """
        setting = cfg.generate_title
        if not setting:
            return None
        model = getattr(setting, "model", None)
        if isinstance(model, str | Mapping):
            key = json.dumps(model, sort_keys=True, default=str)
            if key not in self._resolved:
                self._resolved[key] = resolve_model(model)
            return self._resolved[key]
        if model is None or not callable(model):
            if not self._warned:
                # Mastra falls back to the agent's own model; a Memory here has none (docs/spec.md §5.9 [Δ]).
                logger.warning(
                    "generate_title is enabled but no title model is configured "
                    "(generate_title={'model': 'openai/gpt-4o-mini'} or a ChatModel); titles stay as they are"
                )
                self._warned = True
            return None
        return model  # type: ignore[no-any-return]

    def schedule(self, cfg: MemoryConfig, stored: Sequence[MastraDBMessage]) -> None:
        """Start one background task per thread of ``stored`` (needs a running event loop). Never raises:
        a model that cannot be resolved is logged."""
        if not cfg.generate_title or not stored:
            return
        try:
            model = self.model(cfg)
        except Exception:
            logger.exception("title generation skipped: the title model cannot be used")
            return
        if model is None:
            return
        setting = cfg.generate_title
        # The history Mastra's agent would have loaded for the turn: last_messages (None: all).
        limits = cfg.history_limits
        history = limits.max_messages if limits.enabled else 0
        for thread_id in dict.fromkeys(m.thread_id for m in stored):
            turn = {m.id for m in stored if m.thread_id == thread_id}
            work = self._generate(
                _TitleRun(
                    thread_id,
                    turn,
                    history,
                    model,
                    getattr(setting, "instructions", None),
                    getattr(setting, "min_messages", 1),
                )
            )
            task = asyncio.get_running_loop().create_task(work)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def flush(self) -> None:
        """Wait until every scheduled title task has finished."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _generate(self, run: _TitleRun) -> None:
        thread_id = run.thread_id
        # One title run per thread at a time: a second save waits and then finds the title set.
        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                await self._run(run)
        except Exception:
            # Never fails a save (docs/spec.md §5.9): the messages are stored already.
            logger.exception("title generation failed for thread %s", thread_id)
        finally:
            lock, users = self._locks[thread_id]
            if users == 1:
                del self._locks[thread_id]
            else:
                self._locks[thread_id] = (lock, users - 1)

    async def _run(self, run: _TitleRun) -> None:
        thread_id, turn, history = run.thread_id, run.turn, run.history
        thread = await self.storage.get_thread_by_id(thread_id)
        if thread is None or not untitled(thread.title, thread.metadata):
            return
        page = await self.storage.list_messages(thread_id, per_page=False)
        visible = [m for m in page.messages if m.role != "system"]
        earlier = [m for m in visible if m.id not in turn]
        loaded = earlier if history is None else earlier[len(earlier) - history :] if history else []
        context = loaded + [m for m in visible if m.id in turn]
        if len(context) < run.min_messages or not any(m.role == "user" for m in context):
            return
        transcript = title_transcript(context)
        if not transcript:
            return
        text = await _call(run.model, transcript, run.instructions or DEFAULT_TITLE_INSTRUCTIONS, self.usage)
        title = clean_title(text)
        if not title:
            return
        # Read again: the user may have named or pinned the thread while the model was thinking.
        current = await self.storage.get_thread_by_id(thread_id)
        if current is not None and untitled(current.title, current.metadata):
            await self.storage.update_thread(thread_id, title=title)


@dataclass(frozen=True)
class _TitleRun:
    """One thread's title run, as :meth:`TitleGenerator.schedule` starts it after a save."""

    thread_id: str
    turn: set[str]  # the ids of the messages the save stored in this thread
    history: int | None  # the history the turn loaded (last_messages; None: all)
    model: TitleModel
    instructions: str | None
    min_messages: int


async def _call(model: TitleModel, transcript: str, instructions: str, usage: ModelUsage) -> str:
    try:
        return await _ask(model, transcript, instructions, usage)
    except Exception:
        usage.fail()
        raise


async def _ask(model: TitleModel, transcript: str, instructions: str, usage: ModelUsage) -> str:
    if isinstance(model, ChatModel):
        messages = [{"role": "system", "content": instructions}, {"role": "user", "content": transcript}]
        reply = await model(messages)
        usage.add(reply.usage)
        return reply.text
    # A plain callable (before the model protocol): called with the transcript and the instructions.
    params = inspect.signature(model).parameters.values()
    takes_two = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params) >= 2 or any(
        p.kind is p.VAR_POSITIONAL for p in params
    )
    args = (transcript, instructions) if takes_two else (transcript,)
    if inspect.iscoroutinefunction(model):
        result = await model(*args)
    else:
        # A blocking model runs in a worker thread, so it never stalls the event loop.
        result = await asyncio.to_thread(model, *args)
        if inspect.isawaitable(result):
            result = await result
    usage.add(Usage())  # a plain callable reports no tokens
    return result if isinstance(result, str) else ""


def untitled(title: str | None, metadata: Mapping[str, Any] | None) -> bool:
    """Whether a title may be generated: no title yet and none pinned (``metadata.titlePinned``)."""
    return not title and (metadata or {}).get(TITLE_PINNED) is not True


def clean_title(text: str) -> str:
    """The title in a model's reply: ``<think>…</think>`` blocks cut, whitespace trimmed (no truncation,
    as in Mastra)."""
    return _THINK.sub("", text).strip()


def title_transcript(messages: Sequence[MastraDBMessage]) -> str:
    """The transcript the title model reads (docs/spec.md §5.9), one line per text, as Mastra writes it:
    ``User: …``/``Assistant: …``, ``Tool Result <name>: …`` (200 characters), ``Reasoning: …``, added
    URLs; tool calls still waiting for a result and files are left out."""
    lines: list[str] = []
    for message in messages:
        role = message.role[:1].upper() + message.role[1:]
        content = message.content
        texts = [p.text for p in content.parts if isinstance(p, TextPart)]
        whole = content.content if isinstance(content.content, str) and content.content else ""
        if not whole and texts:
            whole = texts[-1]
        if whole and whole not in texts:
            lines.append(f"{role}: {whole}")
        for part in content.parts:
            if isinstance(part, TextPart):
                lines.append(f"{role}: {part.text}")
            elif isinstance(part, ToolInvocationPart):
                call = part.tool_invocation
                if call.state == "result":
                    result = call.result if isinstance(call.result, str) else _js_json(call.result)
                    lines.append(f"Tool Result {call.tool_name}: {result[:_TOOL_TEXT]}")
            elif isinstance(part, ReasoningPart):
                if part.reasoning:
                    lines.append(f"Reasoning: {part.reasoning}")
            elif isinstance(part, SourceUrlPart) and part.url is not None:
                lines.append(f"{role}: User added URL: {part.url[:_URL_TEXT]}")
    return "\n".join(lines)


def _js_json(value: Any) -> str:
    # JSON.stringify's spelling: no spaces, non-ASCII as is.
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
