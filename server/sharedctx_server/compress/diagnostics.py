"""Compiler and linter diagnostics with code frames (cargo, rustc, clippy, ruff, gcc, clang).

These tools print each finding as a block: a heading (`error[E0308]: mismatched types`,
`warning: unused variable: `x``, ruff's `F401 [*] `os` imported but unused`, gcc's
`main.c:12:5: warning: unused variable 'x'`), where it is (`  --> src/main.rs:26:22`), then
the source it quotes under a gutter (`26 |     let x: i64 = "a";`, `   |     ^^^ expected
`i64``), notes (`= note: ...`, `help: ...`) and a suggested fix as a small diff. The frame
is most of the output (three quarters of a `ruff check` run) and says little once the
heading and the place are known.

The form keeps:
- every error (severity `error` or `fatal error`) whole, frame and notes included: the frame
  says what the compiler expected where;
- of every other finding its heading and its place; findings of one rule whose headings
  differ only in the names they quote (ruff's `F401 [*] `os` imported but unused`) share
  one heading with the names beside their places, and identical headings share one, with
  every place (`src/app.py: 1:1, 29:5`); a warning's heading is never rewritten (warning
  lines are kept as written), only said once when repeated word for word;
- every line that carries an error, wherever it is (a quoted `raise ValueError(...)`);
- the lines between findings (`Compiling app v0.1.0`, `Found 143 errors.`) as they were.
Left out: the frames, notes and suggested fixes of findings that are not errors, and blank
lines.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markers import form_header, omitted_marker, similar_marker
from .plan import Attempt, Plan
from .shapes import SOURCE_GUTTER
from .source import Source
from .wording import counted

__all__ = ["plan_diagnostics"]

# rustc, cargo and clippy: `error[E0308]: mismatched types`, `warning: unused import: `x``.
_SEVERITY_HEAD = re.compile(r"^(?P<severity>error|warning)(?:\[[\w-]+\])?: \S")
# A linter's rule code and message (ruff's full format), a heading only when its place follows.
_RULE_HEAD = re.compile(r"^[A-Z]{1,4}\d{2,4}(?: \[\*\])? \S")
# A note or help heading at the start of a line: inside a finding, one of its notes (rustc's
# `help: try using a conversion method` with the fix under it); alone, a heading when its
# place follows.
_NOTE = re.compile(r"^(?:help|note|info|hint): \S")
# gcc and clang: the place, then the severity (`main.c:12:5: warning: unused variable 'x'`).
# A place's file has a folder or an extension (`main.c`, `src/app`): `12:30:45 E404 ...` in a
# log is no place.
_AT = r"(?=[^\s:]*(?:/|\.[A-Za-z]))[^\s:][^:]*:\d+(?::\d+)?"
_SEVERITY = r"fatal error|error|warning|note"
_PLACED_HEAD = re.compile(rf"^(?P<place>{_AT}): (?P<severity>{_SEVERITY}): \S")
# A linter's finding on one line, its place first (ruff's concise format, flake8, pylint:
# `app/main.py:1:8: F401 [*] `os` imported but unused`).
_RULE = r"[A-Z]{1,4}\d{2,4}\b"
_PLACED_RULE = re.compile(rf"^(?P<place>{_AT}):? (?P<rule>{_RULE})")
# Either of the two anywhere in a text (whether to read it at all).
_PLACED_ANYWHERE = re.compile(rf"^{_AT}(?:: (?:{_SEVERITY}): \S|:? {_RULE})", re.MULTILINE)
# Where a finding is: `  --> src/main.rs:26:22` (a second place: `  ::: src/lib.rs:3:1`).
_PLACE = re.compile(r"^\s*(?P<arrow>-->|:::) ?(?P<place>\S.*?)\s*$")
# A line of the quoted source and its markers, a note in the gutter (`   = note: ...`), an
# elision (`...`), a line of a suggested fix (`17 + from typing import Any`, `   - import os`)
# or the rule between a fix's hunks.
_FRAME = re.compile(
    rf"^\s*(?:{SOURCE_GUTTER}|= \S|\.\.\.\s*$|\d+\s+[-+~](?:\s|$)|[-+](?:\s|$))|^-{{20,}}$"
)
# What gcc says a finding is in, on the lines before it (`util.c: In function 'parse':`,
# `In file included from main.c:3:`, `                 from app.h:2,`).
_CONTEXT = re.compile(
    r"^(?:[^\s:][^:]*: (?:In (?:function|member function|constructor|destructor|instantiation)\b"
    r"|At (?:top|global) (?:level|scope):)|In file included from \S|\s+from \S+:\d+[,:]$)"
)
_GUTTER_NOTE = re.compile(r"^\s*= \S")
# A place as written: the file, then line and column.
_FILE_AT = re.compile(r"^(?P<file>.+?):(?P<at>\d+(?::\d+)?)$")
# What may differ between the headings of one rule's findings: what they quote between
# backticks and their numbers (`Line too long (107 > 100)`).
_SLOT = re.compile(r"`[^`\n]*`|\b\d+(?:\.\d+)?\b")
_PROBE_CHARS = 20_000
# Findings that make this a diagnostics output at all.
_MIN_FINDINGS = 3
# Lines between findings that start with one word, in a row, before they are folded.
_MIN_ALIKE = 5
# A folder all shared places are in, this long or longer, is said once in the header.
_MIN_ROOT = 16
# Places written under one shared heading at most; the rest are counted.
_MAX_PLACES = 60


@dataclass
class _Finding:
    """One diagnostic block: its heading line, its places, and its other lines (indices into
    the content's lines)."""

    head: int
    error: bool
    places: list[str] = field(default_factory=list)
    place_lines: list[int] = field(default_factory=list)
    rest: list[int] = field(default_factory=list)
    message_at: int = 0  # where the heading's message starts (after a place written first)


def _opens(lines: list[str], i: int) -> _Finding | None:
    """The finding whose heading is lines[i], or None."""
    line = lines[i]
    placed = _PLACED_HEAD.match(line)
    if placed is not None:
        error = placed["severity"] != "warning" and placed["severity"] != "note"
        return _Finding(i, error, places=[placed["place"]])
    rule = _PLACED_RULE.match(line)
    if rule is not None:
        return _Finding(i, False, places=[rule["place"]], message_at=rule.start("rule"))
    head = _SEVERITY_HEAD.match(line)
    if head is not None:
        return _Finding(i, head["severity"] == "error")
    if _RULE_HEAD.match(line) or _NOTE.match(line):
        place = _PLACE.match(lines[i + 1]) if i + 1 < len(lines) else None
        if place is not None and place["arrow"] == "-->":
            return _Finding(i, False)
    return None


def _parse(lines: list[str]) -> tuple[list[_Finding | int], int]:
    """The content as findings and the indices of the lines between them (in order), and how
    many non-blank lines belong to findings."""
    items: list[_Finding | int] = []
    current: _Finding | None = None
    understood = 0
    in_note = False  # the last line was a note in the gutter, which may go on indented
    in_sub = False  # a `help:` or `note:` of the finding began: its places are its own
    for i, line in enumerate(lines):
        if current is not None and _NOTE.match(line):
            # rustc's `help:` and `note:` under an error are its own, places and frames too.
            current.rest.append(i)
            understood += 1
            in_note, in_sub = False, True
            continue
        opened = _opens(lines, i)
        if opened is not None:
            current = opened
            items.append(current)
            understood += 1
            in_note = in_sub = False
            continue
        if current is not None:
            place = _PLACE.match(line)
            if place is not None and not in_sub:
                current.places.append(place["place"])
                current.place_lines.append(i)
                understood += 1
                continue
            if place is not None:
                current.rest.append(i)  # where a note points: left out with the note
                understood += 1
                continue
            # rustc's `   = note: expected struct `String`` goes on as `      found struct ...`.
            if _FRAME.match(line) or (in_note and line[:1] == " "):
                in_note = in_note and line[:1] == " " or _GUTTER_NOTE.match(line) is not None
                current.rest.append(i)
                understood += 1
                continue
            if not line.strip():
                continue  # blank lines end nothing: rustc puts none inside a finding
        current = None
        in_note = False
        items.append(i)
        if _CONTEXT.match(line):
            understood += 1  # kept as it is, but part of the findings
    return items, understood


@dataclass
class _Group:
    """Findings written under one heading: their heading as shown and their places."""

    heading: str
    members: list[_Finding]
    names: list[str] = field(default_factory=list)  # per member: what its heading differs in


def _template(heading: str) -> str:
    """The heading with every slot (_SLOT) masked: findings of one rule share it."""
    return _SLOT.sub("\0", heading)


def _shared_heading(headings: list[str]) -> tuple[str, list[str]]:
    """One heading for headings of one template: the slots all of them fill alike as they
    are, the others as `…`; and per heading, its values of those others."""
    parts = [_SLOT.split(h) for h in headings]
    values = [_SLOT.findall(h) for h in headings]
    varying = [len({v[s] for v in values}) > 1 for s in range(len(values[0]))]
    out = parts[0][0]
    for s, vary in enumerate(varying):
        value = values[0][s]
        shown = ("`…`" if value.startswith("`") else "…") if vary else value
        out += shown + parts[0][s + 1]
    names = [" ".join(v[s] for s in range(len(v)) if varying[s]) for v in values]
    return out, names


class _Renderer:
    def __init__(self, source: Source, lines: list[str], items: list[_Finding | int]) -> None:
        self.source = source
        self.lines = lines
        self.items = items
        self.frames_dropped = 0
        self.merged = 0
        self.folded_lines = 0
        # The folder every place under a shared heading is in, said once in the header.
        self.root = ""

        self._kept: dict[int, list[int]] = {}

    def kept(self, item: _Finding) -> list[int]:
        """The lines of a finding's frame that carry an error, which stay (error lines are
        never dropped); judged once per finding."""
        found = self._kept.get(item.head)
        if found is None:
            is_error_line = self.source.judged.is_error_line
            found = self._kept[item.head] = [i for i in item.rest if is_error_line(self.lines[i])]
        return found

    def groups(self) -> dict[int, _Group]:
        """The findings that are not errors grouped by heading, keyed by their first member's
        heading line. A heading that is a warning (or an error line) groups only with the same
        heading word for word; a linter's finding also with headings differing in names only."""
        groups: dict[str, _Group] = {}
        first: dict[int, _Group] = {}
        for item in self.items:
            if not isinstance(item, _Finding) or item.error or not item.places:
                continue
            heading = self.lines[item.head]
            if self.kept(item):
                key = f"\0{item.head}"  # a frame with an error line: a group of its own
            elif _PLACED_HEAD.match(heading) or self.source.judged.is_notable(heading):
                key = heading
            else:
                key = _template(heading[item.message_at :])
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(heading, [])
                first[item.head] = group
            group.members.append(item)
        for group in groups.values():
            # Under a shared heading each finding's place is beside it: a heading that begins
            # with its place (a linter's one-line finding) is shared without it.
            messages = [self.lines[m.head][m.message_at :] for m in group.members]
            if len(set(messages)) > 1:
                group.heading, group.names = _shared_heading(messages)
            else:
                group.heading, group.names = messages[0], [""] * len(messages)
        self.root = _common_folder(
            [
                _split_place(m.places[0])[0]
                for g in groups.values()
                if len(g.members) > 1
                for m in g.members
            ]
        )
        return first

    def render(self) -> list[str]:
        first = self.groups()
        out: list[str] = []
        between: list[int] = []  # lines between findings not written yet
        for item in self.items:
            if isinstance(item, int):
                if self.lines[item].strip():
                    between.append(item)
                continue
            out += self.folded(between)
            between = []
            if item.error or not item.places:
                out += [self.lines[i] for i in sorted([item.head, *item.place_lines, *item.rest])]
                continue
            self.frames_dropped += len(item.rest) - len(self.kept(item))
            group = first.get(item.head)
            if group is None:
                continue  # written with the first finding of its group
            out += self.group_lines(group)
        return out + self.folded(between)

    def folded(self, run: list[int]) -> list[str]:
        """Lines between findings as written, but for runs of _MIN_ALIKE or more that start
        with one word (cargo's `Compiling serde v1.0.188` for each of 200 crates, make's
        `cc -c` for each file), which keep their first and last line around a count. A line
        that carries an error or a warning is never folded."""
        out: list[str] = []
        i = 0
        while i < len(run):
            key = self.lines[run[i]].split(maxsplit=1)[0]
            j = i
            while (
                j < len(run)
                and self.lines[run[j]].split(maxsplit=1)[0] == key
                and not self.source.judged.is_notable(self.lines[run[j]])
            ):
                j += 1
            if j - i >= _MIN_ALIKE:
                self.folded_lines += j - i - 2
                out += [self.lines[run[i]], similar_marker(j - i - 2), self.lines[run[j - 1]]]
                i = j
            else:
                out.append(self.lines[run[i]])
                i += 1
        return out

    def group_lines(self, group: _Group) -> list[str]:
        members = group.members
        if len(members) == 1:
            # Alone: as it was, without its frame (but for error lines in it).
            item = members[0]
            return [self.lines[i] for i in sorted([item.head, *item.place_lines, *self.kept(item)])]
        self.merged += len(members)
        out = [group.heading]
        for item in members:
            out += [self.lines[i] for i in self.kept(item)]
        by_file: dict[str, list[str]] = {}
        shown = 0
        for item, names in zip(members, group.names, strict=True):
            if shown == _MAX_PLACES:
                break
            shown += 1
            # A gcc heading holds its own place; a block names it on its `-->` line.
            file, where = _split_place(item.places[0])
            file = file[len(self.root) :] if file.startswith(self.root) else file
            by_file.setdefault(file, []).append(f"{where} {names}".strip())
        out += [f"  {file}: {', '.join(spots)}" for file, spots in by_file.items()]
        if len(members) > shown:
            out.append("  " + omitted_marker(len(members) - shown, "more place"))
        return out


def _split_place(place: str) -> tuple[str, str]:
    """A place's file and its line and column (`src/app.py:3:8` -> `src/app.py`, `3:8`); a
    place not written so is a file with no line ("")."""
    at = _FILE_AT.match(place)
    return (at["file"], at["at"]) if at else (place, "")


def _common_folder(files: list[str]) -> str:
    """The folder (ending in `/`) all `files` are in, when it is long enough to be worth
    saying once (_MIN_ROOT); "" otherwise."""
    if not files:
        return ""
    first, last = min(files), max(files)  # the common prefix of all is theirs
    n = 0
    while n < min(len(first), len(last)) and first[n] == last[n]:
        n += 1
    root = first[: first.rfind("/", 0, n) + 1]
    return root if len(root) >= _MIN_ROOT else ""


def _summary(items: list[_Finding | int], renderer: _Renderer) -> str:
    # A heading without a place is a tool's summary (`error: could not compile ...`).
    findings = [item for item in items if isinstance(item, _Finding) and item.places]
    errors = sum(1 for f in findings if f.error)
    files = {file for f in findings for file, where in map(_split_place, f.places[:1]) if where}
    parts = [
        f"diagnostics: {counted(len(findings), 'finding')} ({counted(errors, 'error')})"
        + (f" in {counted(len(files), 'file')}" if files else ""),
        "errors whole; of the others the heading and the place",
    ]
    if renderer.merged:
        parts.append(
            "findings of one rule share a heading, their places under it"
            " (each with what its heading said where theirs differ, the `…`)"
            + (f", in {renderer.root}" if renderer.root else "")
        )
    if renderer.frames_dropped:
        parts.append(f"{renderer.frames_dropped:,} lines of code frames, notes and fixes omitted")
    if renderer.folded_lines:
        parts.append("runs of alike lines between findings counted")
    return form_header("; ".join(parts))


def plan_diagnostics(source: Source) -> Plan | None:
    """The diagnostics compressor, if the content holds findings with places and frames."""
    text = source.content
    if "-->" not in text and _PLACED_ANYWHERE.search(text, 0, _PROBE_CHARS) is None:
        return None  # neither a finding's place line nor gcc's placed heading near the start
    lines = source.lines
    items, understood = _parse(lines)
    findings = [item for item in items if isinstance(item, _Finding)]
    if sum(1 for f in findings if f.places) < _MIN_FINDINGS:
        return None
    nonblank = sum(1 for line in lines if line.strip())
    share = understood / nonblank if nonblank else 0.0
    reason = f"{share:.0%} of the non-blank lines are compiler or linter findings"
    return Plan("diagnostics", share, reason, lambda: _render(source, lines, items))


def _render(source: Source, lines: list[str], items: list[_Finding | int]) -> Attempt:
    renderer = _Renderer(source, lines, items)
    body = renderer.render()
    dropped = ["the code frames, notes and suggested fixes of findings that are not errors"]
    if renderer.folded_lines:
        dropped.append("runs of alike lines between findings (counted)")
    if renderer.merged:
        dropped.append("repeated headings of one rule (their places kept beside one)")
    return Attempt("\n".join([_summary(items, renderer), *body]), tuple(dropped))
