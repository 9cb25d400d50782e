"""Where a diff is cut (`diff -u`, `git diff`, `git show`, `git log -p`): a commit's header
(`commit <sha>` with its `Author:`, `Date:` lines), its message, each file's header, each
hunk; a long hunk where a new paragraph of the changed code starts (docs/excerpts.md).

Read as a log, every changed line was a record of its own: an excerpt showed the one line
that matched and lost the function it belongs to, and the file and commit it is in were
never a segment short enough to head it. Cut by its own structure, a hunk's segments are
headed by their file's header (`diff --git`, segment.heads), and that by its commit's header:
"which commit added LIST_FREE?" is answered by the hunk, its file and the commit above both.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from .heads import HEAD_TOKENS

__all__ = ["diff_heads", "diff_starts", "looks_like_diff"]

# A file header and a hunk header, both: a diff, not a log that quotes one line of one.
_HAS_FILE = re.compile(r"^\+\+\+ \S", re.MULTILINE)
_HAS_HUNK = re.compile(r"^@@@? -\d+(?:,\d+)? (?:-\d+(?:,\d+)? )?\+\d+(?:,\d+)? @@", re.MULTILINE)
# Lines that start a part of their own: a commit, a file (`diff --git`, `diff -ru`; git's
# `Binary files ... differ`, diff's `Only in dir: name`), a hunk.
_STARTS = re.compile(r"^(?:commit [0-9a-f]{7,64}\b|diff |@@@? -\d|Binary files |Only in )")
# The lines of a commit's header after its `commit` line (git's default and `fuller` formats);
# its message, after them, is a part of its own.
_COMMIT_META = re.compile(r"^(?:Merge|Author|AuthorDate|Commit|CommitDate|Date):\s")
# A diff's headers may head up to this many tokens: a file's names its path four times
# (`diff --git a/p b/p`, `---`, `+++`), a commit's holds a 40-digit sha, an author with an
# address and a date. A long path or address makes them longer than other heads may be, and
# they are the one thing that says which file and which commit a hunk changed.
DIFF_HEAD_TOKENS = 2 * HEAD_TOKENS
# The lines of a file's header after its `diff` line.
_FILE_META = re.compile(
    r"^(?:index \S|(?:new|deleted) file mode|(?:old|new) mode|similarity index"
    r"|dissimilarity index|rename (?:from|to)|copy (?:from|to)|--- |\+\+\+ )"
)
# A hunk longer than this many lines is cut where a paragraph of its code starts (a changed
# or context line after one that is blank), into runs of at least _MIN_RUN lines.
_LONG_HUNK = 24
_MIN_RUN = 8


def looks_like_diff(text: str) -> bool:
    """Whether `text` is a unified diff or holds one (`git log -p`)."""
    # A substring test first: most texts have no hunk, and it costs a fraction of the search.
    if "@@ -" not in text:
        return False
    return _HAS_HUNK.search(text) is not None and _HAS_FILE.search(text) is not None


def diff_starts(lines: list[str]) -> list[int]:
    """First line of each part of a diff (the first line always starts one)."""
    starts = [0]
    in_header = lines[0].startswith("diff ")
    in_commit = lines[0].startswith("commit ")
    for i in range(1, len(lines)):
        line = lines[i]
        if _STARTS.match(line):
            starts.append(i)
            in_header = line.startswith("diff ")
            in_commit = line.startswith("commit ")
        elif in_header and _FILE_META.match(line):
            continue
        elif in_commit:
            if not _COMMIT_META.match(line):
                starts.append(i)  # the message, after the commit's header lines
                in_commit = False
        elif _old_and_new(lines, i):
            starts.append(i)  # a file of `diff -u`, which has no `diff` line before it
            in_header = True
        else:
            in_header = False
    return _hunks_by_paragraph(lines, starts)


def _old_and_new(lines: list[str], i: int) -> bool:
    """Whether line `i` and the next are a file's `---` and `+++` lines."""
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _hunks_by_paragraph(lines: list[str], starts: list[int]) -> list[int]:
    """`starts` with each long hunk also cut where a paragraph of its code starts."""
    out: list[int] = []
    bounds = [*starts, len(lines)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        out.append(a)
        if b - a <= _LONG_HUNK or not lines[a].startswith("@@"):
            continue
        for i in range(a + 2, b):
            blank_before = not lines[i - 1][1:].strip()
            if blank_before and lines[i][1:].strip() and i - out[-1] >= _MIN_RUN:
                out.append(i)
    return out


def diff_heads(lines: list[str], starts: Sequence[int], tokens: Sequence[int]) -> list[int]:
    """Per part (first lines `starts`, token counts `tokens`), the part that heads it, or -1:
    a hunk's is its file's header, and a file header's, a message's, and a hunk's whose file
    header is too long, its commit's header (headers of at most DIFF_HEAD_TOKENS tokens head).
    A commit's header has none."""
    heads = [-1] * len(starts)
    commit = header = -1
    for k, start in enumerate(starts):
        line = lines[start]
        if line.startswith("commit "):
            commit = k if tokens[k] <= DIFF_HEAD_TOKENS else -1
            header = -1
        elif line.startswith("diff ") or _old_and_new(lines, start):
            header = k if tokens[k] <= DIFF_HEAD_TOKENS else -1
            heads[k] = commit
        else:
            heads[k] = header if header >= 0 else commit
    return heads
