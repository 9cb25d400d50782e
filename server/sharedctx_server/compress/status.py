"""`git status` (long, `--short` and `--porcelain`): every path, said once per folder.

A long status writes each changed path on a line of its own with its change (`	modified:
src/app/orders.py`) under its section (`Changes to be committed:`, `Changes not staged for
commit:`, `Untracked files:`, `Unmerged paths:`), with git's hints (`(use "git add <file>..."
to update what will be committed)`) under each heading. The log compressor folded a list of
changed paths into `[... 29 similar lines]`: the names, which are what a status is read for,
were gone. The form keeps every path, grouped by section, change and folder:

    Changes not staged for commit:
      modified: src/app/ orders.py payments.py refunds.py
      deleted: docs/ old.md

and the short formats (` M src/app.py`, `?? notes.txt`) the same way under their two-letter
codes. Left out: git's hints and the repeated words and folders. A line that carries an error
stays as it was, and so does every line that is no part of a status (`On branch main`,
`Your branch is ahead of 'origin/main' by 2 commits.`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markers import form_header
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_status"]

# (Multi-line: also sought in the content as written, which may end its lines in `\r\n`.)
_SECTION = re.compile(
    r"^(?:Changes to be committed|Changes not staged for commit|Untracked files|Unmerged paths"
    r"|Ignored files):\r?$",
    re.MULTILINE,
)
_HINT = re.compile(r'^\s+\((?:use|commit or discard|fix conflicts and run) ".*\)$')
# An entry of a long status: a tab (or spaces, once normalised), its change, the path.
_ENTRY = re.compile(
    r"^\s+(?:(?P<change>new file|modified|deleted|renamed|copied|typechange|unmerged"
    r"|both modified|both added|both deleted|added by us|added by them|deleted by us"
    r"|deleted by them):\s+)?(?P<path>\S.*)$"
)
# A line of `git status --short` or `--porcelain`: two status letters, a space, the path.
# (Not two blanks: any line indented three spaces would read as one.)
_SHORT = re.compile(r"^(?P<change>(?! {2})[ MTADRCU?!]{2}) (?P<path>\S.*)$")
# What git says around the sections (read as part of a status, kept as written).
_AROUND = re.compile(
    r"^(?:On branch |HEAD detached |Your branch |  \(use \"git |No commits yet$"
    r"|nothing to commit|nothing added to commit|no changes added to commit|You have unmerged"
    r"|All conflicts fixed|You are currently |interactive rebase in progress|Last command"
    r"|Next command|and have \d+ and \d+ different commits)"
)
_PROBE_CHARS = 4000
# Paths in a status worth the form at all (a short status is stored as it is).
_MIN_PATHS = 8


@dataclass
class _Section:
    """A heading (or "" for a short status) and its paths, by change and then folder."""

    heading: str
    changes: dict[str, dict[str, list[str]]] = field(default_factory=dict)

    def add(self, change: str, path: str) -> None:
        # A rename's two paths stay together, under the folder of neither; a folder (an
        # untracked one, `build/`) is a name in its parent's.
        if " -> " in path:
            folder, name = "", path
        else:
            folder, _, name = path.rstrip("/").rpartition("/")
            name += "/" if path.endswith("/") else ""
            if " " in name and not name.startswith('"'):
                name = f'"{name}"'  # names share a line: one with a blank is quoted, as git does
        self.changes.setdefault(change, {}).setdefault(folder, []).append(name)


def _parse(source: Source) -> tuple[list[_Section | str], int, int, int]:
    """The status as sections and the lines kept as written (in order); how many non-blank
    lines it understood, how many paths it holds and how many hints it leaves out."""
    items: list[_Section | str] = []
    section: _Section | None = None
    understood = paths = hints = 0
    # The lines as written: normalised, ` M src/app.py` would lose the blank that is half
    # of its status.
    for line in source.raw_lines:
        line = line.rstrip()
        if not line.strip():
            section = None if section is not None and section.heading else section
            continue
        if source.judged.is_error_line(line):
            items.append(line)  # an error line stays where it was, as written
            continue
        if _SECTION.match(line):
            section = _Section(line)
            items.append(section)
            understood += 1
            continue
        if _HINT.match(line):
            hints += 1
            understood += 1
            continue
        entry = _ENTRY.match(line) if section is not None and section.heading else None
        short = _SHORT.match(line) if entry is None else None
        if entry is not None and section is not None:
            section.add(entry["change"] or "", entry["path"])
        elif short is not None:
            if section is None or section.heading:
                section = _Section("")
                items.append(section)
            section.add(short["change"], short["path"])
        else:
            understood += 1 if _AROUND.match(line) else 0
            items.append(line)
            continue
        paths += 1
        understood += 1
    return items, understood, paths, hints


def _section_lines(section: _Section) -> list[str]:
    out = [section.heading] if section.heading else []
    indent = "  " if section.heading else ""
    for change, folders in section.changes.items():
        # A long status's change in words, a short one's two letters as git writes them.
        label = (f"{change}: " if change else "") if section.heading else f"{change} "
        for folder, names in folders.items():
            where = f"{folder}/ " if folder else ""
            out.append(f"{indent}{label}{where}{' '.join(names)}")
    return out


def plan_status(source: Source) -> Plan | None:
    """The status compressor, if the content reads as `git status` with enough paths."""
    head = source.content[:_PROBE_CHARS]
    first = head.lstrip("\n").split("\n", 1)[0]
    if _SECTION.search(head) is None and _SHORT.match(first.rstrip("\r")) is None:
        return None  # no section heading near the start, nor a short status's first line
    items, understood, paths, hints = _parse(source)
    if paths < _MIN_PATHS:
        return None
    nonblank = len(source.nonblank_raw)
    share = understood / nonblank if nonblank else 0.0
    reason = f"{share:.0%} of the non-blank lines read as git status"
    return Plan("status", share, reason, lambda: _render(items, paths, hints))


def _render(items: list[_Section | str], paths: int, hints: int) -> Attempt:
    body: list[str] = []
    for item in items:
        body += [item] if isinstance(item, str) else _section_lines(item)
    sections = [i for i in items if isinstance(i, _Section)]
    summary = [
        f"git status: {counted(paths, 'path')} in {counted(len(sections), 'section')}",
        "each change's paths grouped by folder (`modified: src/app/ a.py b.py`)",
    ]
    if hints:
        summary.append(f"{counted(hints, 'hint')} of git's omitted")
    return Attempt(
        "\n".join([form_header("; ".join(summary)), *body]),
        ("git's hints", "each path's change and folder, said once per group"),
    )
