"""What an entry's key, metadata and command lines say about it, for the namespace's index:
the command a shell tool's output echoes, the commands of a terminal session, the terms that
name the entry, and its role in a conversation's turns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..fit.lexical import lexical_terms
from ..model import EntryMeta, Kind
from ..segment.commands import COMMAND_ECHO, command_words, form_words, session_prompts

__all__ = ["ShellCommands", "echoed_command", "name_terms", "shell_commands", "turn_role"]


def echoed_command(text: str) -> str | None:
    """The command a shell tool's output opens with, spaced as one (`$ make  test`, or after
    a prompt `dev@box:~/app$ make test`: `make test`), or None."""
    end = text.find("\n")
    first = text if end < 0 else text[:end]
    if COMMAND_ECHO.match(first) is None:
        return None
    return " ".join(first.split("$", 1)[1].split())


def name_terms(key: str, meta: EntryMeta) -> list[str]:
    """The BM25 terms that name an entry rather than say what it holds: its key, its tool's
    name, what its form reports (a diff: changed files), its kind and who wrote it (its role
    and agent). A query often says where to look
    ("the Linux log", "the pytest output", "what did the user ask?", "what did the tester
    find?"); as terms of the entry and of each of its segments, such words pick the entry's
    lines over the same line elsewhere, and a word every entry shares (its kind, in a
    namespace of logs) weighs nothing. Tags and threads are not among them: a caller names
    those in Fit's filters, and as words they made LoCoMo's turns, tagged with their
    session's number, longer texts and lost 0.7 points of evidence recall at 500 tokens."""
    kind = meta.kind.hint or ""
    # A tool named for a program (`df`) names what that program reports too (`disk space`).
    words = " ".join(
        (
            key,
            meta.tool_name,
            command_words(meta.tool_name),
            form_words(meta.compressor),
            kind.replace("_", " "),
            meta.role,
            meta.agent_id,
        )
    )
    return list(dict.fromkeys(lexical_terms(words)))


@dataclass
class ShellCommands:
    """The command lines of a cut entry's text: the terms of the one it opens with, which
    name the whole output (its line is then indexed as blank), or, in a terminal session of
    several, per segment that opens with one, the words of what its program reports."""

    names: list[str] = field(default_factory=list)
    per_segment: dict[int, list[str]] = field(default_factory=dict)


def shell_commands(lines: Sequence[str], starts: Sequence[int]) -> ShellCommands:
    """The ShellCommands of an entry's `lines`, cut into segments at `starts`."""
    prompts = session_prompts(lines, starts)
    if prompts:
        # A session: each command heads its output (segment.heads), and says what it reports.
        found = {
            k: lexical_terms(command_words(echoed_command(lines[starts[k]]) or "")) for k in prompts
        }
        return ShellCommands(per_segment={k: terms for k, terms in found.items() if terms})
    command = echoed_command(lines[0]) if lines else None
    if command is None:
        return ShellCommands()
    # The command a shell tool's output opens with (`$ ruff check .`) names the output, as its
    # tool's name does: a line of its own, it matched every question naming the program, in
    # each run of it, and took the place of the lines that answer.
    return ShellCommands(names=lexical_terms(f"{lines[0]} {command_words(command)}"))


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
