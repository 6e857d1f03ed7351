"""Observation groups (docs/spec.md §5.14): the observations of one observation cycle, wrapped as Mastra
wraps them, ``<observation-group id="<16 hex>" range="<first message id>:<last message id>">…
</observation-group>``, so each group points back to the messages it was written from (the ``recall``
tool's cursor). A reflection is one group whose range spans its sources' (first start to last end, as
Mastra bounds reflected ranges) with ``kind="reflection"``.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

_GROUP = re.compile(r"<observation-group\s([^>]*)>\n?([\s\S]*?)\n?</observation-group>")
_ATTRIBUTE = re.compile(r'([\w][\w-]*)="([^"]*)"')
_THREAD = re.compile(r'<thread id="[^"]*">\n?|\n?</thread>')


@dataclass(frozen=True)
class ObservationGroup:
    """One group: its id, the message range it came from, its kind (None or ``reflection``), its text."""

    id: str
    range: str
    content: str
    kind: str | None = None

    @property
    def endpoints(self) -> tuple[str, str] | None:
        """The range's first and last message ids (the first segment's), or None when malformed."""
        first = self.range.split(",")[0].strip()
        start, sep, end = first.partition(":")
        return (start, end) if sep and start and end else None


def new_group_id() -> str:
    """A new group id: 16 hex digits, as Mastra's anchor ids."""
    return secrets.token_hex(8)


def message_range(message_ids: Sequence[str]) -> str:
    """``first:last`` of the observed messages (in order)."""
    return f"{message_ids[0]}:{message_ids[-1]}"


def wrap_group(observations: str, range_: str, group_id: str | None = None, kind: str | None = None) -> str:
    """``observations`` wrapped in one group."""
    kind_attr = f' kind="{kind}"' if kind else ""
    return (
        f'<observation-group id="{group_id or new_group_id()}" range="{range_}"{kind_attr}>\n'
        f"{observations.strip()}\n</observation-group>"
    )


def parse_groups(observations: str) -> list[ObservationGroup]:
    """The groups in an observation text, in order (blocks without an id or range are skipped)."""
    groups = []
    for match in _GROUP.finditer(observations or ""):
        attributes = dict(_ATTRIBUTE.findall(match.group(1)))
        if attributes.get("id") and attributes.get("range"):
            groups.append(
                ObservationGroup(
                    attributes["id"], attributes["range"], match.group(2).strip(), attributes.get("kind")
                )
            )
    return groups


def strip_groups(observations: str) -> str:
    """The observation text without group (and thread) tags: what the Reflector reads, and what the prompt
    shows when retrieval is off."""
    text = _GROUP.sub(lambda m: m.group(2).strip(), observations or "")
    text = _THREAD.sub("\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def spanning_range(groups: Sequence[ObservationGroup]) -> str | None:
    """The range from the first group's first id to the last group's last id, or None without groups."""
    ends = [g.endpoints for g in groups if g.endpoints is not None]
    if not ends:
        return None
    return f"{ends[0][0]}:{ends[-1][1]}"
