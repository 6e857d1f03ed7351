"""The Observer's and Reflector's prompts and the prompt section that carries observations (docs/spec.md
§5.14). The text is this project's own; the *structure* is Mastra's (``@mastra/memory`` 1.31):

* the Observer reads the new messages under ``## New Message History to Observe`` (grouped by date,
  ``**Role (HH:MM):** text``), then the observations so far, and answers with an ``<observations>``
  block of dated lines (``Date: Mon D, YYYY`` headings, ``* <priority> (HH:MM) …`` lines) and optionally
  ``<current-task>`` and ``<suggested-response>``;
* the Reflector reads the observations and answers with one condensed ``<observations>`` block;
* observations are kept in ``<observation-group id="…" range="<first id>:<last id>">`` blocks whose range
  points back to the messages they came from (see :mod:`.groups`), and reach the agent's prompt in one
  system message: a preamble, the ``<observations>`` block, how to use it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from ...errors import ModelOutputError
from ...messages import MastraDBMessage, ReasoningPart, TextPart, ToolInvocationPart, text_and_parts

#: Longest tool argument/result text the Observer is shown (the rest is cut, with a note).
TOOL_TEXT_LIMIT = 2_000

OBSERVER_INSTRUCTIONS = """\
You keep the long-term memory of an assistant. You read the newest part of a conversation between a user \
and the assistant and write down what is worth remembering, so the assistant can continue without \
rereading the messages.

Write observations:
- one fact, preference, decision, event or open question per line;
- under a heading "Date: <Mon D, YYYY>" for the day the messages were written, always in that format;
- each line as "* <priority> (HH:MM) <observation>", where priority is 🔴 (important: identity, stated \
preferences, commitments, corrections), 🟡 (useful context) or 🟢 (minor detail);
- with concrete names, numbers, dates and quantities exactly as the user gave them;
- noting when a new statement replaces an older one ("user now prefers …, no longer …");
- about what the assistant did or promised only when the user will rely on it later.
Do not repeat observations that are already in the previous observations. Never invent anything that is \
not in the messages.

Answer in exactly this form:
<observations>
Date: Dec 2, 2026
* 🔴 (09:15) …
</observations>
<current-task>
What the user is working on right now, one or two sentences (leave out when nothing is in progress).
</current-task>
<suggested-response>
How the assistant should pick the conversation up, one sentence (optional).
</suggested-response>"""

REFLECTOR_INSTRUCTIONS = """\
You maintain the long-term memory of an assistant. The memory is a log of dated observations that has \
grown too long. Rewrite it shorter while keeping everything the assistant still needs:
- merge lines that say the same thing; keep the newest when two lines disagree;
- keep "Date: <Mon D, YYYY>" headings and each kept line's "* <priority> (HH:MM)" prefix;
- drop 🟢 details that later lines made irrelevant, never drop 🔴 lines that still hold;
- keep names, numbers and dates exactly;
- write only observations, no commentary.

Answer in exactly this form:
<observations>
Date: …
* 🔴 (HH:MM) …
</observations>"""

CONTEXT_PREAMBLE = "Your memory of earlier conversation with this user, written as dated observations:"
CONTEXT_RULES = """\
Use these observations as what you remember: answer with the specific details they hold. When two \
observations disagree, the one with the later date is current. A plan whose date has passed is probably \
done unless a later observation says otherwise. The newest user message decides what to do next. Never \
mention that your memory is kept as observations."""
RETRIEVAL_RULES = """\
Observation groups (<observation-group range="firstId:lastId">) point to the original messages they were \
written from. When the exact wording matters, call the recall tool: mode "messages" with cursor set to one \
of the ids of a range (or threadId to read another thread), mode "threads" to list this user's threads\
{search}."""


@dataclass(frozen=True)
class ObserverOutput:
    """What the Observer (or Reflector) answered: the observation lines, and the optional hints."""

    observations: str
    current_task: str | None = None
    suggested_response: str | None = None


def observer_messages(
    existing: str, messages: Mapping[str, Sequence[MastraDBMessage]], instruction: str | None = None
) -> list[dict[str, str]]:
    """The Observer's request: the instructions (plus ``observation.instruction``) as the system message;
    the new messages (one ``### Thread`` section per thread when there are several), then the observations
    so far, as the user message."""
    system = OBSERVER_INSTRUCTIONS + (f"\n\n{instruction.strip()}" if instruction else "")
    if len(messages) == 1:
        history = format_messages(next(iter(messages.values())))
    else:
        history = "\n\n".join(
            f"### Thread {thread_label(tid)}\n\n{format_messages(msgs)}" for tid, msgs in messages.items()
        )
    previous = existing.strip() or "(none yet)"
    user = (
        f"## New Message History to Observe\n\n{history}\n\n---\n\n"
        f"## Previous Observations\n\n{previous}\n\n"
        "Write the observations of the new messages only, in the form above."
    )
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def thread_label(thread_id: str) -> str:
    """How a thread is named to the Observer: 8 hex digits of its id's SHA-256, not the id itself (Mastra
    obscures thread ids in resource scope too, so the model sees no identifier a user may have chosen)."""
    return hashlib.sha256(thread_id.encode()).hexdigest()[:8]


def reflector_messages(observations: str, instruction: str | None = None) -> list[dict[str, str]]:
    """The Reflector's request: its instructions (plus ``reflection.instruction``), then the observations."""
    system = REFLECTOR_INSTRUCTIONS + (f"\n\n{instruction.strip()}" if instruction else "")
    user = f"## Observations to Condense\n\n{observations.strip()}"
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def context_message(
    observations: str,
    *,
    current_task: str | None = None,
    suggested_response: str | None = None,
    retrieval: bool = False,
    search: bool = False,
    retrieval_instructions: str | None = None,
) -> str:
    """The system message that carries observations into the agent's prompt (docs/spec.md §5.14)."""
    parts = [CONTEXT_PREAMBLE, f"<observations>\n{observations.strip()}\n</observations>", CONTEXT_RULES]
    if current_task:
        parts.append(f"<current-task>\n{current_task.strip()}\n</current-task>")
    if suggested_response:
        parts.append(f"<suggested-response>\n{suggested_response.strip()}\n</suggested-response>")
    if retrieval:
        extra = ', mode "search" with a query to search them by meaning' if search else ""
        parts.append(RETRIEVAL_RULES.format(search=extra))
        if retrieval_instructions:
            parts.append(retrieval_instructions.strip())
    return "\n\n".join(parts)


def format_messages(messages: Sequence[MastraDBMessage]) -> str:
    """The messages as the Observer reads them: a ``Date:`` line whenever the day changes, then
    ``**User (HH:MM):** text``; tool calls and results as ``[tool name(args) → result]`` (cut at
    :data:`TOOL_TEXT_LIMIT` characters)."""
    lines: list[str] = []
    day = None
    for message in messages:
        stamp = message.created_at
        if stamp.date() != day:
            day = stamp.date()
            lines.append(f"Date: {format_date(stamp)}")
        text = message_text(message)
        if text:
            lines.append(f"**{message.role.capitalize()} ({stamp:%H:%M}):** {text}")
    return "\n".join(lines)


def format_date(stamp: datetime) -> str:
    """``Dec 2, 2026``: the date format of observation headings."""
    return f"{stamp:%b} {stamp.day}, {stamp.year}"


def message_text(message: MastraDBMessage) -> str:
    """A message's text for the Observer: text parts, reasoning left out, tool calls summarised."""
    pieces: list[str] = []
    for part in text_and_parts(message):
        if isinstance(part, TextPart):
            pieces.append(part.text)
        elif isinstance(part, ToolInvocationPart):
            call = part.tool_invocation
            args = _cut(json.dumps(call.args, default=str, ensure_ascii=False))
            if call.state == "result":
                result = call.result if isinstance(call.result, str) else json.dumps(call.result, default=str)
                pieces.append(f"[tool {call.tool_name}({args}) → {_cut(result)}]")
            else:
                pieces.append(f"[tool {call.tool_name}({args})]")
        elif isinstance(part, ReasoningPart):
            continue  # the model's private reasoning is not what the user said or was told
    return "\n".join(p for p in pieces if p).strip()


def _cut(text: str) -> str:
    if len(text) <= TOOL_TEXT_LIMIT:
        return text
    return f"{text[:TOOL_TEXT_LIMIT]}… [cut {len(text) - TOOL_TEXT_LIMIT} characters]"


_SECTION = r"^[ \t]*<{tag}>([\s\S]*?)^[ \t]*</{tag}>"
_LIST_ITEM = re.compile(r"^\s*(?:[-*]|\d+\.)\s")
#: Longest observation line kept (a runaway model line is cut, as Mastra cuts at 10,000 characters).
MAX_LINE = 10_000


def parse_output(text: str, model_id: str, role: str = "Observer") -> ObserverOutput:
    """The observations and hints in a model's reply.

    The ``<observations>`` block is read (several are joined); without one, the reply's list lines are
    taken, as Mastra falls back. A reply with neither is not valid output.

    Raises:
        ModelOutputError: no observations in the reply; ``reply`` holds the reply text.
    """
    blocks = [m.strip() for m in re.findall(_SECTION.format(tag="observations"), text, re.M | re.I)]
    observations = "\n".join(b for b in blocks if b)
    if not blocks:
        observations = "\n".join(line for line in text.splitlines() if _LIST_ITEM.match(line)).strip()
    observations = "\n".join(_clip(line) for line in observations.splitlines())
    if not observations.strip():
        raise ModelOutputError(
            f"{role} model {model_id} replied without observations (no <observations> block and no list "
            "lines); the reply is in .reply",
            reply=text,
            details={"model_id": model_id, "role": role},
        )
    return ObserverOutput(
        observations.strip(), _section(text, "current-task"), _section(text, "suggested-response")
    )


def _section(text: str, tag: str) -> str | None:
    match = re.search(_SECTION.format(tag=tag), text, re.M | re.I)
    value = match.group(1).strip() if match else ""
    return value or None


def _clip(line: str) -> str:
    return line if len(line) <= MAX_LINE else f"{line[:MAX_LINE]} … [line cut]"
