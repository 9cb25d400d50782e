"""What an entry's key, metadata and first line say about it, for the namespace's index:
the command a shell tool's output echoes, the terms that name the entry, and its role in a
conversation's turns."""

from __future__ import annotations

import re

from ..fit.lexical import lexical_terms
from ..model import EntryMeta, Kind

__all__ = ["echoed_command", "name_terms", "turn_role"]


# A shell prompt and the command after it: `$ make test`, `dev@box:~/app$ make test`.
_COMMAND_ECHO = re.compile(r"^(?:[\w.-]+@[\w.-]+:\S*)?\$ +\S")


def echoed_command(text: str) -> str | None:
    """The command a shell tool's output opens with, spaced as one (`$ make  test`, or after
    a prompt `dev@box:~/app$ make test`: `make test`), or None."""
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    if _COMMAND_ECHO.match(first) is None:
        return None
    return " ".join(first.split("$", 1)[1].split())


def name_terms(key: str, meta: EntryMeta) -> list[str]:
    """The BM25 terms that name an entry rather than say what it holds: its key, its tool's
    name and its kind. A query often says where to look ("the Linux log", "the pytest
    output"); as terms of the entry and of each of its segments, such words pick the entry's
    lines over the same line elsewhere, and a word every entry shares (its kind, in a
    namespace of logs) weighs nothing."""
    kind = meta.kind.hint or ""
    return list(dict.fromkeys(lexical_terms(f"{key} {meta.tool_name} {kind.replace('_', ' ')}")))


def turn_role(kind: Kind, role: str, tool_name: str) -> str:
    """How the turn strategies see an entry: a message role, or "" for a tool output.

    Messages keep their role (user when none is given). Tool outputs attach to the turn they
    happened in, like the kit's tool calls. Anything else (logs, documents, notes) stands as
    a turn of its own, the way an assistant message with no open turn does.
    """
    if kind == Kind.MESSAGE:
        return role or "user"
    if kind == Kind.TOOL_OUTPUT or (kind == Kind.UNSPECIFIED and tool_name and not role):
        return ""
    return role or "assistant"
