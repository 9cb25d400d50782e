"""Reading directory listings line by line: `ls -l` (and `-i`, `-s`, `-R`), `find` (and
`find -ls`), `tree`, `du` and `tar tv`, into folders of entries.

Each line is one of: an entry, a folder header (`path:` in `ls -R`), a `total N` line, the
tool's own message (`ls: cannot open directory 'x': Permission denied`), a summary (`tree`'s
`3 directories, 12 files`), a blank line, or something else (kept verbatim by the compressor).
`parse_listing` reads the raw lines (tree's indentation only means something before
whitespace is collapsed) and says how many of them it understood.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = [
    "Entry",
    "Folder",
    "Listing",
    "Other",
    "bare_names_only",
    "folder_key",
    "parse_listing",
    "size_bytes",
]

# ls -l, with the inode and block columns of -i / -s (and find -ls) in front. The date is the
# locale's "Mon DD HH:MM" / "Mon DD YYYY", "DD Mon ...", or --time-style=long-iso / full-iso.
_LS_LONG = re.compile(
    r"^\s*(?:\d+\s+)?(?:[\d.,]+[KMGTPE]?\s+)?"
    r"(?P<type>[-bcdlpsD?])(?P<mode>[-rwxsStTlL?]{9})[.+@]?\s+"
    r"(?P<links>\d+)\s+(?P<owner>\S+)\s+(?:(?P<group>\S+)\s+)?"
    r"(?P<size>\d+,\s*\d+|[\d.,]+[KMGTPE]?)\s+"
    r"(?P<date>[^\W\d]{3,5}\.?\s+\d{1,2}\s+(?:\d{1,2}:\d{2}|\d{4})"
    r"|\d{1,2}\.?\s+[^\W\d]{3,5}\.?\s+(?:\d{1,2}:\d{2}|\d{4})"
    r"|\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?(?:\s+[+-]\d{4})?"
    r"|\d{2}-\d{2}\s+\d{2}:\d{2})"
    r"\s(?P<name>.+)$"
)
# tar tv (GNU's and bsdtar's long listing): no link count, `owner/group`, an ISO date, a path.
_TAR = re.compile(
    r"^(?P<type>[-dlhcbp])(?P<mode>[-rwxsStT]{9})\s+(?P<owner>[^\s/]+)/(?P<group>\S+)\s+"
    r"(?P<size>\d+(?:,\d+)?)\s+(?P<date>\d{4}-\d{2}-\d{2}\s+\d{2}:\d{2}(?::\d{2})?)\s"
    r"(?P<name>.+)$"
)
_TOTAL = re.compile(r"^total\s+[\d.,]+[KMGTPE]?$")
_TOOL_MESSAGE = re.compile(r"^(?:ls|find|du|tree|stat|g?ls|gfind|gdu):\s")
_HEADER = re.compile(r"^(?P<path>\S.*):$")
# tree: "├── ", "└── ", "│   " (and --charset=ascii "|-- ", "`-- ", "|   "), four columns a level.
_TREE_BRANCHES = ("├──", "└──", "|--", "`--")
_TREE = re.compile(
    r"^(?P<prefix>(?:[│|] {3}|    )*)(?:"
    + "|".join(re.escape(b) for b in _TREE_BRANCHES)
    + r")\s(?P<rest>.*)$"
)
_TREE_ATTRS = re.compile(r"^\[(?P<attrs>[^\]]*)\]\s+(?P<name>.*)$")
_TREE_SUMMARY = re.compile(r"^\d+ director(?:y|ies)(?:, \d+ files?)?$")
_DU = re.compile(r"^(?P<size>[\d.,]+[KMGTPE]?)\t(?P<path>.+)$")
_PATH = re.compile(r"^(?:/|\./|\.\./|~/)?[^\s/]+(?:/[^\s/]*)*$")
# A variable's assignment (`env`, `printenv`, `set`: `HOME=/root`) is one word like a path
# of `find`, but no listing prints one.
# `KEY=value` (env), `core.editor=vim` (git config -l), `key:value` (Redis INFO, getent):
# settings, not file names. (Keys of three characters or more: `a3:5f:...` is a hex dump.)
_ASSIGNMENT = re.compile(r"^[A-Za-z_][\w.-]*=|^[A-Za-z_]\w{2,}(?::[^\s:/]+$|:\S+[:,])")
_SIZE = re.compile(r"^(?P<number>\d+(?:[.,]\d+)?)(?P<unit>[KMGTPE]?)$")
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50, "E": 1 << 60}


@dataclass(slots=True)
class Entry:
    """One file, folder or link as the listing showed it."""

    name: str
    type: str = "-"  # ls's type letter: - d l c b p s; "?" when the listing does not say
    mode: str = ""  # the nine permission letters, "" when not shown
    owner: str = ""
    group: str = ""
    size: int | None = None  # bytes, when shown
    size_text: str = ""  # the size as printed (du and ls -h print units)
    date: str = ""
    target: str = ""  # a symlink's target
    is_dir: bool = False
    line: str = ""  # the line it was read from


@dataclass(slots=True)
class Other:
    """A line kept as it was: a tool message, a summary, or one not understood."""

    line: str
    notable: bool  # a message of the tool (Permission denied ...) or a summary


@dataclass
class Folder:
    """One folder's entries and kept lines, in listing order."""

    path: str
    items: list[Entry | Other] = field(default_factory=list)
    header: str = ""  # its `path:` line in `ls -R`, as written


@dataclass
class Listing:
    """Folders in order of first appearance, and how much of the text was understood."""

    folders: dict[str, Folder]
    style: str  # "ls", "find", "tree" or "du"
    understood: int  # non-blank lines read as part of the listing
    nonblank: int
    root: str = ""  # tree's first line: the folder it shows

    def folder(self, path: str) -> Folder:
        """The folder at `path`, created (in order) on first use."""
        found = self.folders.get(path)
        if found is None:
            found = self.folders[path] = Folder(path)
        return found


def size_bytes(text: str) -> int | None:
    """Bytes of a printed size: `4096`, `4.0K`, `12M` (powers of 1024, as ls -h and du print)."""
    if text.isdigit():
        return int(text)
    m = _SIZE.match(text)
    if m is None:
        return None
    return int(float(m.group("number").replace(",", ".")) * _UNITS[m.group("unit")])


def folder_key(path: str) -> str:
    """A folder's path as the listing names it, without "./" in front or "/" behind."""
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") or ("/" if path.startswith("/") else ".")


def _split_path(path: str) -> tuple[str, str]:
    path = folder_key(path)
    cut = path.rfind("/")
    if cut < 0:
        return ".", path
    return (path[:cut] or "/"), path[cut + 1 :]


def _long_entry(
    kind: str, mode: str, owner: str, group: str, size_text: str, date: str, name: str,
    target: str, line: str,
) -> Entry:  # fmt: skip
    """An entry of a long listing (ls -l, find -ls, tar tv) from its columns."""
    return Entry(
        name=name,
        type=kind,
        mode=mode,
        owner=owner,
        group=group,
        # A device's size is its numbers, `8, 0`.
        size=size_bytes(size_text) if "," not in size_text.strip(",") else None,
        size_text=size_text,
        date=date if "  " not in date else " ".join(date.split()),
        target=target,
        is_dir=kind == "d",
        line=line,
    )


def _ls_entry(m: re.Match[str]) -> tuple[str | None, Entry]:
    # One groups() call: this runs for every line of a listing.
    kind, mode, _links, owner, group, size_text, date, name = m.groups()
    target = ""
    if kind == "l" and " -> " in name:
        name, target = name.split(" -> ", 1)
    folder: str | None = None
    if "/" in name.rstrip("/") and not target:
        folder, name = _split_path(name)  # find -ls, or ls -l given paths
    entry = _long_entry(kind, mode, owner, group or "", size_text, date, name, target, m.string)
    return folder, entry


def _tar_entry(m: re.Match[str]) -> tuple[str, Entry]:
    kind, mode, owner, group, size_text, date, name = m.groups()
    target = ""
    for link in (" -> ", " link to "):  # a symlink, a hard link
        if link in name:
            name, target = name.split(link, 1)
            break
    folder, name = _split_path(name)
    kind = "l" if kind == "h" else kind
    return folder, _long_entry(kind, mode, owner, group, size_text, date, name, target, m.string)


class _Reader:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.listing = Listing({}, "ls", 0, 0)
        self.current = "."  # the folder entries without a path of their own belong to
        self.tree_stack: list[str] = []
        self.styles: dict[str, int] = {}

    def _count(self, style: str) -> None:
        self.styles[style] = self.styles.get(style, 0) + 1
        self.listing.understood += 1

    def _add(self, folder: str, item: Entry | Other) -> None:
        self.listing.folder(folder).items.append(item)

    def _other(self, line: str, notable: bool) -> None:
        self._add(self.current, Other(line, notable))

    def read(self) -> Listing:
        previous_blank = True
        for line in self.lines:
            stripped = line.strip()
            if not stripped:
                previous_blank = True
                continue
            self.listing.nonblank += 1
            self._line(line, stripped, previous_blank)
            previous_blank = False
        if self.styles:
            self.listing.style = max(self.styles, key=lambda s: (self.styles[s], s))
        return self.listing

    def _line(self, line: str, stripped: str, after_blank: bool) -> None:
        m = _LS_LONG.match(line)
        if m:
            folder, entry = _ls_entry(m)
            self._count("ls" if folder is None else "find")
            self._add(self.current if folder is None else folder, entry)
            return
        tar = _TAR.match(line)
        if tar:
            folder, entry = _tar_entry(tar)
            self._count("find")  # paths, as find prints them
            self._add(folder, entry)
            return
        if _TOTAL.match(stripped):
            self.listing.understood += 1
            return
        if _TOOL_MESSAGE.match(stripped):
            self.listing.understood += 1
            self._other(stripped, notable=True)
            return
        tree = _TREE.match(line)
        if tree:
            self._tree(len(tree.group("prefix")) // 4, tree.group("rest"), line)
            return
        du = _DU.match(line)
        if du and du.group("path") in (".", "./"):
            self._count("du")  # the total of the folder du was given
            self._other(stripped, notable=True)
            return
        if du:
            self._count("du")
            folder, name = _split_path(du.group("path"))
            size_text = du.group("size")
            entry = Entry(name, "?", size=size_bytes(size_text), size_text=size_text, line=line)
            self._add(folder, entry)
            return
        header = _HEADER.match(stripped)
        if header and (after_blank or not self.listing.folders):
            self._count("ls")
            self.current = folder_key(header.group("path"))
            self.listing.folder(self.current).header = line
            return
        if _TREE_SUMMARY.match(stripped):
            self.listing.understood += 1
            self._other(stripped, notable=True)
            return
        if _PATH.match(stripped) and not _ASSIGNMENT.match(stripped):
            self._path(stripped)
            return
        self._other(line.strip(), notable=False)

    def _tree(self, depth: int, rest: str, line: str) -> None:
        self._count("tree")
        size_text = ""
        attrs = _TREE_ATTRS.match(rest)
        if attrs:
            rest = attrs.group("name")
            size_text = (attrs.group("attrs").split() or [""])[-1]
        name, target = rest, ""
        if " -> " in rest:
            name, target = rest.split(" -> ", 1)
        # Entries of depth 0 belong to the root (tree's first line), kept as ".".
        del self.tree_stack[depth:]
        parent = "/".join(self.tree_stack) or "."
        entry = Entry(name, "l" if target else "?", size_text=size_text, target=target, line=line)
        entry.size = size_bytes(size_text) if size_text else None
        self._add(parent, entry)
        self.tree_stack.append(name)

    def _path(self, path: str) -> None:
        # A lone word is a name in `ls -1` / `ls -R` output; a path is a line of `find`.
        if "/" not in path.rstrip("/") and path not in (".", ".."):
            self._count("ls")
            name = path.rstrip("/")
            self._add(self.current, Entry(name, "d" if path.endswith("/") else "?", line=path))
            return
        self._count("find")
        if path in (".", "/", ".."):
            self.listing.folder(path)
            return
        folder, name = _split_path(path)
        self._add(folder, Entry(name, "d" if path.endswith("/") else "?", line=path))


def _mark_parent_folders(listing: Listing) -> None:
    """Entries that are folders with listed contents of their own become directories."""
    for folder in list(listing.folders.values()):
        for item in folder.items:
            if isinstance(item, Entry) and not item.is_dir and item.type in "?d":
                path = item.name if folder.path == "." else f"{folder.path.rstrip('/')}/{item.name}"
                path = folder_key(path)
                if path in listing.folders or item.type == "d":
                    item.is_dir = True
                    item.type = "d"


def _tree_root(lines: list[str]) -> int | None:
    """Index of tree's root line (".", or the path given): the line before its first entry."""
    first: int | None = None
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        if first is None:
            first = i
            continue
        return first if _TREE.match(line) and not _TREE.match(lines[first]) else None
    return None


def parse_listing(lines: list[str]) -> Listing:
    """The listing in `lines` (raw lines), however much of it is one."""
    root = _tree_root(lines)
    reader = _Reader(lines[root + 1 :] if root is not None else lines)
    listing = reader.read()
    if root is not None:
        listing.root = lines[root].strip()
        listing.understood += 1
        listing.nonblank += 1
    _mark_parent_folders(listing)
    return listing


def bare_names_only(text: str, nonblank: int) -> bool:
    """Whether `parse_listing` can read `text` (of `nonblank` non-blank lines) as nothing but
    bare names in one folder, the `ls -1` shape a CSV without spaces has. Cheap: one split.

    It can when every non-blank line is one word (as many words as lines) and no word is a
    path, a folder header (`name:`), `.`, `..`, a tree branch or an assignment (`env`'s
    `LANG=C.UTF-8`), in a text without tabs (a du line is a size, a tab and a path). Such a
    line matches none of the reader's shapes but a bare name of the current folder, and no
    line ever changes that folder.
    """
    if "\t" in text or "/" in text:
        return False
    words = text.split()
    if len(words) != nonblank:
        return False  # a line holds spaces: it may be an entry of another shape
    return not any(
        w[-1] == ":" or w in (".", "..") or w in _TREE_BRANCHES or _ASSIGNMENT.match(w)
        for w in words
    )
