"""Diffs and git history (`git log`, `git log --stat`, `git log -p`, `git show`, `git diff`,
`diff -u`, `diff -ru`): commits by their subject, files and hunks by their headers.

Kept: each commit as one line (`commit <id> <date> <subject>`, the author too when not the
commonest one), its `--stat` lines without the +/- graph (`path | 12`) and its summary; for
each file of a diff one line (`diff a/x.py b/x.py`, with new/deleted/renamed/binary), every
hunk header (`@@ -12,7 +12,9 @@ def f():`) and the first `diff_hunk_head` and last
`diff_hunk_tail` changed lines of each hunk. Left out: message bodies after the subject,
`index` lines, context lines, the middle of long hunks and of long file lists (each counted
in a marker). A line carrying an error (in a message, a changed line, a file name) is kept
as it was, wherever it is.

Diff lines are read as written: whitespace inside a changed line is part of the change.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .wording import counted

__all__ = ["plan_diff"]

_COMMIT = re.compile(r"^commit (?P<id>[0-9a-f]{7,64})\b(?P<rest>.*)$")
_AUTHOR = re.compile(r"^Author:\s+(?P<who>.*?)(?:\s+<[^>]*>)?\s*$")
_DATE = re.compile(r"^(?:Date|AuthorDate):\s+(?P<when>.*)$")
_OTHER_META = re.compile(r"^(?:Merge|Commit|CommitDate|Reflog|Notes)\S*:\s")
_GIT_DATE = re.compile(r"^\w{3} (?P<mon>\w{3}) (?P<day>\d{1,2}) [\d:]{8} (?P<year>\d{4})")
_STAT = re.compile(r"^ (?P<path>\S.*?) +\| +(?P<count>\d+|Bin\b.*?)(?: [+-]+)?$")
_STAT_SUMMARY = re.compile(r"^ \d+ files? changed")
# `git log --name-status`: a status letter (R and C with a similarity), a tab, the path (a
# rename's two paths).
_NAME_STATUS = re.compile(r"^(?P<count>[ADMTUX]|[RC]\d{0,3})\t(?P<path>[^\t]+)(?:\t(?P<to>.+))?$")
_DIFF = re.compile(r"^diff (?:--git |--cc |--combined |(?:-\S+ )*)(?P<files>.*)$")
_FILE_META = re.compile(
    r"^(?:index \S+|(?:new|deleted) file mode|(?:old|new) mode|similarity index"
    r"|dissimilarity index|rename (?:from|to)|copy (?:from|to))"
)
_OLD = re.compile(r"^--- (?P<path>\S.*?)(?:\t.*)?$")
_NEW = re.compile(r"^\+\+\+ (?P<path>\S.*?)(?:\t.*)?$")
_HUNK = re.compile(r"^@@@? -\d+(?:,\d+)? (?:-\d+(?:,\d+)? )?\+\d+(?:,\d+)? @@@?")
_BINARY = re.compile(r"^Binary files .* differ$|^GIT binary patch$")
_SHORT_RUN = 2  # left-out runs this short are shown instead


@dataclass
class _Out:
    lines: list[str] = field(default_factory=list)
    commits: int = 0
    files: int = 0
    hunks: int = 0
    bodies: int = 0  # message lines after the subject, left out
    context: int = 0  # context lines left out
    changed: int = 0  # changed lines left out
    stats: int = 0  # --stat lines left out


class _Reader:
    """One pass over the lines, writing the compressed form as it goes."""

    def __init__(self, source: Source, head: int, tail: int, max_stat: int) -> None:
        self.lines = source.raw_lines
        # Whether a line is one of the content's error lines (kept as it was, wherever it is).
        self.error = source.judged.is_error_line
        self.head, self.tail, self.max_stat = head, tail, max_stat
        self.out = _Out()
        self.understood = 0
        authors = Counter(m.group("who") for line in self.lines if (m := _AUTHOR.match(line)))
        self.usual_author = authors.most_common(1)[0][0] if authors else ""

    def seen(self, line: str) -> None:
        """Count a line as understood (blank lines do not count: the share is of non-blank)."""
        if line.strip():
            self.understood += 1

    def emit(self, line: str) -> None:
        self.out.lines.append(line)

    def emit_for(self, original: str, short: str) -> None:
        """`short` in place of `original`, unless `original` is an error line (kept whole)."""
        self.emit(original.rstrip() if self.error(original) else short)

    def read(self) -> None:
        i, n = 0, len(self.lines)
        while i < n:
            line = self.lines[i]
            if _COMMIT.match(line):
                i = self._commit(i)
            elif _DIFF.match(line) and not line.startswith("diff --stat"):
                i = self._file(i)
            elif _OLD.match(line) and i + 1 < n and _NEW.match(self.lines[i + 1]):
                i = self._file(i)
            elif _STAT.match(line) or _STAT_SUMMARY.match(line):
                i = self._stats(i)
            elif _NAME_STATUS.match(line):
                i = self._file_list(i, _NAME_STATUS)
            else:
                if line.strip():
                    self.emit(line.rstrip())
                i += 1

    def _commit(self, i: int) -> int:
        m = _COMMIT.match(self.lines[i])
        assert m is not None
        self.out.commits += 1
        self.seen(self.lines[i])
        who = when = ""
        j = i + 1
        while j < len(self.lines):
            line = self.lines[j]
            if (a := _AUTHOR.match(line)) is not None:
                who = a.group("who")
            elif (d := _DATE.match(line)) is not None:
                when = _short_date(d.group("when"))
            elif not _OTHER_META.match(line):
                break
            if self.error(line):
                self.emit(line.rstrip())
            self.seen(line)
            j += 1
        message: list[str] = []
        while j < len(self.lines) and (not self.lines[j].strip() or self.lines[j][:4] == "    "):
            if self.lines[j].strip():
                message.append(self.lines[j])
            self.seen(self.lines[j])
            j += 1
        if j < len(self.lines) and self.lines[j].rstrip() == "---":  # git format-patch, show
            self.seen(self.lines[j])
            j += 1
        subject = message[0].strip() if message else ""
        parts = ["commit", m.group("id")[:10] + m.group("rest").rstrip(), when]
        if who and who != self.usual_author:
            parts.append(f"({who})")
        if message and self.error(message[0]):
            self.emit(" ".join(p for p in parts if p))
            self.emit(message[0].rstrip())  # an error line stays a line of its own
        else:
            self.emit(" ".join(p for p in [*parts, subject] if p))
        for line in message[1:]:
            if self.error(line):
                self.emit(line.rstrip())
            else:
                self.out.bodies += 1
        return j

    def _stats(self, i: int) -> int:
        """A --stat block: files grouped by folder without the +/- graph, a short summary."""
        i = self._file_list(i, _STAT)
        if i < len(self.lines) and _STAT_SUMMARY.match(self.lines[i]):
            summary = self.lines[i]
            self.emit_for(summary, " " + _SUMMARY_WORDS.sub(_short_summary, summary.strip()))
            self.seen(summary)
            i += 1
        return i

    def _file_list(self, i: int, pattern: re.Pattern[str]) -> int:
        """A list of changed files (`--stat`'s without the +/- graph, `--name-status`'s):
        grouped by folder, each with its count or status; past max_stat, counted."""
        lines: list[str] = []
        while i < len(self.lines) and pattern.match(self.lines[i]):
            lines.append(self.lines[i])
            i += 1
        self.understood += len(lines)
        shown = lines[: self.max_stat]
        group: list[tuple[str, str]] = []  # (name, count) of consecutive files in one folder
        folder = ""
        for line in lines:
            m = pattern.match(line)
            assert m is not None
            if self.error(line):
                self._stat_group(folder, group)
                group, folder = [], ""
                self.emit(line.rstrip())
            elif line in shown:
                path = (m.groupdict().get("to") or m.group("path")).strip()
                here, _, name = path.rpartition("/")
                if here != folder:
                    self._stat_group(folder, group)
                    group, folder = [], here
                group.append((name, m.group("count")))
        self._stat_group(folder, group)
        if len(lines) > len(shown):
            left = [line for line in lines[len(shown) :] if not self.error(line)]
            self.out.stats += len(left)
            self.emit(omitted_marker(len(left), "file", _top_folders(left, pattern)))
        return i

    def _stat_group(self, folder: str, group: list[tuple[str, str]]) -> None:
        if not group:
            return
        if len(group) == 1:
            name, count = group[0]
            self.emit(f" {folder + '/' if folder else ''}{name} | {count}")
            return
        files = ", ".join(f"{name} {count}" for name, count in group)
        self.emit(f" {folder + '/' if folder else ''}: {files}")

    def _file(self, i: int) -> int:
        """A file's diff: its headers as one line, then its hunks."""
        self.out.files += 1
        notes: list[str] = []
        header = ""
        line = self.lines[i]
        if (d := _DIFF.match(line)) is not None:
            header = line.rstrip() if self.error(line) else "diff " + d.group("files")
            self.seen(line)
            i += 1
        while i < len(self.lines):
            line = self.lines[i]
            if _FILE_META.match(line) or _BINARY.match(line):
                if not line.startswith("index "):
                    notes.append(line.rstrip())
            elif (old := _OLD.match(line)) is not None and not header:
                header = f"diff {old.group('path')}"
            elif (new := _NEW.match(line)) is not None:
                if header.count(" ") < 2:
                    header += f" {new.group('path')}"
            elif not _OLD.match(line):
                break
            if self.error(line):
                self.emit(line.rstrip())
            self.seen(line)
            i += 1
        if notes and self.error(header):
            self.emit(header)  # an error line is kept as it was, a line of its own
            self.emit(" ".join(f"({n})" for n in notes))
        else:
            self.emit(" ".join([header, *(f"({n})" for n in notes)]) if notes else header)
        while i < len(self.lines) and _HUNK.match(self.lines[i]):
            i = self._hunk(i)
        return i

    def _hunk(self, i: int) -> int:
        self.out.hunks += 1
        self.emit(self.lines[i].rstrip())
        self.seen(self.lines[i])
        i += 1
        changed: list[str] = []
        while i < len(self.lines):
            line = self.lines[i]
            first = line[:1]
            if first in ("+", "-") and not (_OLD.match(line) and _NEW.match(self._next(i))):
                changed.append(line.rstrip())
            elif first == " " or not line or first == "\\":
                if first != "\\":
                    self.out.context += 1
                if self.error(line):
                    changed.append(line.rstrip())  # an error in a context line stays too
            else:
                break
            self.seen(line)
            i += 1
        self._changed(changed)
        return i

    def _next(self, i: int) -> str:
        return self.lines[i + 1] if i + 1 < len(self.lines) else ""

    def _changed(self, changed: list[str]) -> None:
        keep = set(range(min(len(changed), self.head)))
        keep.update(range(max(0, len(changed) - self.tail), len(changed)))
        keep.update(k for k, line in enumerate(changed) if self.error(line))
        run: list[str] = []
        for k, line in enumerate(changed):
            if k in keep:
                self._flush(run)
                run = []
                self.emit(line)
            else:
                run.append(line)
        self._flush(run)

    def _flush(self, run: list[str]) -> None:
        if len(run) <= _SHORT_RUN:
            for line in run:
                self.emit(line)  # a marker would cost as much as these lines
            return
        self.out.changed += len(run)
        plus = sum(1 for line in run if line.startswith("+"))
        detail = f"+{plus} -{len(run) - plus}"
        self.emit(omitted_marker(len(run), "changed line", detail))


_SUMMARY_WORDS = re.compile(r"(\d+) (insertion|deletion)s?\(([+-])\)")


def _short_summary(m: re.Match[str]) -> str:
    return f"{m.group(3)}{m.group(1)}"


def _short_date(when: str) -> str:
    m = _GIT_DATE.match(when)
    return f"{m.group('year')} {m.group('mon')} {m.group('day')}" if m else when.strip()


def _top_folders(stat_lines: list[str], pattern: re.Pattern[str]) -> str:
    folders: Counter[str] = Counter()
    for line in stat_lines:
        m = pattern.match(line)
        path = m.group("path").strip() if m else ""
        folders[path.split("/", 1)[0] + "/" if "/" in path else path] += 1
    shown = ", ".join(f"{f} {n}" for f, n in folders.most_common(4))
    return shown + (", ..." if len(folders) > 4 else "")


def _summary(reader: _Reader) -> str:
    out = reader.out
    facts: list[str] = []
    if out.commits:
        facts.append(counted(out.commits, "commit"))
        if reader.usual_author:
            facts.append(f"by {reader.usual_author} unless named")
    if out.files:
        facts.append(f"{counted(out.files, 'file')} diffed in {counted(out.hunks, 'hunk')}")
    what = "git log" if out.commits else "diff"
    left = []
    if out.bodies:
        left.append(f"{counted(out.bodies, 'message line')} after the subjects")
    if out.context:
        left.append(f"{counted(out.context, 'context line')}")
    if out.changed:
        left.append(f"{counted(out.changed, 'changed line')} in the middle of long hunks")
    if out.stats:
        left.append(f"{counted(out.stats, 'file')} of long --stat lists")
    summary = f"{what}: {', '.join(facts)}; kept subjects, files and hunk headers"
    return summary + (f"; left out {', '.join(left)}" if left else "")


def _render(source: Source) -> tuple[Attempt, float]:
    config = source.config
    reader = _Reader(source, config.diff_hunk_head, config.diff_hunk_tail, config.diff_max_stat)
    reader.read()
    nonblank = len(source.nonblank_raw)
    share = min(1.0, reader.understood / nonblank) if nonblank else 0.0
    out = reader.out
    dropped = [
        f"{counted(n, noun)}"
        for n, noun in (
            (out.bodies, "commit message line"),
            (out.context, "context line"),
            (out.changed, "changed line"),
            (out.stats, "--stat line"),
        )
        if n
    ]
    text = "\n".join([form_header(_summary(reader)), *out.lines])
    return Attempt(text, tuple(dropped)), share


_QUICK = re.compile(r"^(?:commit [0-9a-f]{7,64}\b|diff |@@@? -\d|--- \S)", re.MULTILINE)


def _lists_files(line: str) -> bool:
    return bool(_STAT_SUMMARY.match(line) or _NAME_STATUS.match(line))


def plan_diff(source: Source) -> Plan | None:
    """The diff compressor, if the content holds commits or file diffs with hunks."""
    if _QUICK.search(source.content) is None:
        return None
    # Ruled out before rendering, which costs far more than these checks.
    # A diff has hunks; a log, two commits or more, or one with its files listed (`git show
    # --stat` or `--name-status` of one commit, whose 19 files the log compressor cut to 5).
    hunks = any(_HUNK.match(line) for line in source.raw_lines)
    if not hunks:
        commits = sum(1 for line in source.raw_lines[:4000] if _COMMIT.match(line))
        listed = commits == 1 and any(_lists_files(line) for line in source.raw_lines[:4000])
        if commits < 2 and not listed:
            return None
    attempt, share = _render(source)
    reason = f"{share:.0%} of the non-blank lines are commits, file headers or hunks"
    return Plan("diff", share, reason, lambda: attempt)
