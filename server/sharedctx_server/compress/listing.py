"""Directory listings (`ls -l`, `ls -lR`, `find`, `tree`, `du`): one line per folder.

Each folder becomes `path/ (12 files, 3 dirs, 4.1M): name name dir/ link -> target ...`:
- attributes are shown only where unusual: the commonest permissions (per type), owner:group
  and day are said once in the header; an entry that differs carries its own in brackets;
  executables end in `*`, folders in `/`; large files (1 MiB or more, or the listing's five
  largest) carry their size; in `du` output every name carries its size but files of the
  commonest size when many have it (one block, `4.0K`), which the header says once;
- numbered runs (`part_001.bin` ... `part_300.bin`) become first, last and a count; names
  sharing a long suffix are written once with braces: `{a,b,c}.cpython-311.pyc`;
- a folder whose files are named after its parent's (`__pycache__`) is counted, not listed;
- a folder with more names than `listing_max_names` (twice that at the top two levels) keeps
  its unusual and well-known ones (README, pyproject.toml, __init__.py ...) and its first ones;
  the rest are counted by extension in a marker: `[... 412 names omitted: 300 .py, 112 .pyc]`;
- the tool's own messages (`Permission denied`), error lines and lines that are not part of
  the listing are kept as they were, under the folder they appeared in;
- in a deep tree, a run of folder lines that share a long path is written under that path,
  indented, each with the rest of its own (path_tree.py).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .listing_names import MIN_BRACE, Usual, braced, display_items, extension, stems, usual_of
from .listing_parse import (
    Entry,
    Folder,
    Listing,
    Other,
    bare_names_only,
    folder_key,
    parse_listing,
)
from .markers import form_header, omitted_marker
from .path_tree import FolderLine, nest_paths
from .plan import Attempt, Plan
from .source import Source
from .whitespace import collapse_ws
from .wording import counted, human_size

__all__ = ["plan_listing"]


_MIRROR_SHARE = 0.9  # of a folder's files named after its parent's: a derived folder
_PROBE_LINES = 200  # lines from each end of a large text judged before reading it all
# Tools whose output a column of bare words is a listing of.
_LISTING_TOOLS = ("ls", "dir", "find", "tree")


class _Renderer:
    def __init__(self, listing: Listing, usual: Usual, max_names: int) -> None:
        self.listing = listing
        self.usual = usual
        self.max_names = max_names
        self.omitted = 0
        self.mirrored = 0
        self.shared = 0  # folders written on a line shared with same-named siblings
        self.nested = 0  # folder lines written under a path they share (path_tree.py)
        self.root = self._root()
        self._stems: dict[str, set[str]] = {}  # folder path -> its files' stems
        # du: each listed folder's own total, by folder key (a folder is an entry of its
        # parent's, and its size holds everything under it).
        self._du_sizes = _du_sizes(listing) if listing.style == "du" else {}

    def _root(self) -> str:
        paths = [p for p in self.listing.folders if p not in (".", "/")]
        if len(paths) < 2 or len(paths) < len(self.listing.folders):
            return ""
        parts = [p.split("/") for p in paths]
        common: list[str] = []
        for column in zip(*parts, strict=False):
            if len(set(column)) != 1:
                break
            common.append(column[0])
        return "/".join(common)

    def _path(self, path: str) -> str:
        if self.root and (path == self.root or path.startswith(self.root + "/")):
            path = path[len(self.root) + 1 :] or "."
        return "./" if path == "." else path.rstrip("/") + "/"

    def _depth(self, path: str) -> int:
        shown = self._path(path).strip("./")
        return shown.count("/") + 1 if shown else 0

    def _own_line(self, folder: Folder, entry: Entry) -> bool:
        """Whether a folder entry has a line of its own further on (recursive listings)."""
        if not entry.is_dir or entry.name in (".", ".."):
            return False
        base = "" if folder.path == "." else folder.path.rstrip("/") + "/"
        return folder_key(base + entry.name) in self.listing.folders

    def _passing(self, folder: Folder) -> bool:
        """Whether a folder holds only sub-folders that have lines of their own."""
        entries = [i for i in folder.items if isinstance(i, Entry)]
        return bool(entries) and all(self._own_line(folder, e) for e in entries)

    def parts(self, folder: Folder) -> tuple[list[str], str, list[str]]:
        """A folder's facts (counts, size), its names and the lines kept under it."""
        entries = [i for i in folder.items if isinstance(i, Entry)]
        if self.listing.style == "du":
            facts = [counted(len(entries), "entry", "entries")]
            size = self._du_sizes.get(folder.path) or _sizes(entries)
            facts += [human_size(size)] if size else []
        else:
            files = [e for e in entries if not e.is_dir]
            dirs = len(entries) - len(files)
            size = _sizes(files)
            facts = [counted(len(files), "file")] if files else []
            if dirs:
                facts.append(counted(dirs, "dir"))
            if size and self.listing.style != "tree":
                facts.append(human_size(size))
        # Sub-folders with a line of their own are counted here, not named twice.
        named = [e for e in entries if not self._own_line(folder, e)]
        names = self._names(folder, named) if named else ""
        return facts, names, [i.line for i in folder.items if isinstance(i, Other)]

    def line(self, path: str, facts: list[str], names: str, kept: Sequence[str] = ()) -> FolderLine:
        """`path/ (facts): names`, and the lines kept under it."""
        rest = f" ({', '.join(facts) or 'empty'})"
        return FolderLine(path, f"{rest}: {names}" if names else rest, tuple(kept))

    def body(self) -> list[str]:
        """Every folder's line; sibling folders with the same names share one line."""
        rendered = {path: self.parts(f) for path, f in self.listing.folders.items()}
        siblings: dict[tuple[str, str, tuple[str, ...]], list[str]] = {}
        for path, (facts, names, others) in rendered.items():
            if names and not others and "/" in path.strip("/") and "[..." not in names:
                parent = path.rstrip("/").rsplit("/", 1)[0]
                counts = tuple(f for f in facts if f[:1].isdigit() and "file" in f or "dir" in f)
                siblings.setdefault((parent, names, counts), []).append(path)
        grouped: dict[str, list[str]] = {}
        for members in siblings.values():
            if len(members) >= MIN_BRACE:
                grouped[members[0]] = members
        skip = {m for members in grouped.values() for m in members[1:]}
        out: list[FolderLine] = []
        for path, (facts, names, others) in rendered.items():
            folder = self.listing.folders[path]
            if path in skip or (not names and not others and self._passing(folder)):
                continue
            group = grouped.get(path)
            if group:
                self.shared += len(group)
                parent = self._path(path.rstrip("/").rsplit("/", 1)[0]).removeprefix("./")
                leaves = ",".join(m.rstrip("/").rsplit("/", 1)[1] for m in group)
                each = [f for f in facts if not f[:1].isdigit() or "file" in f or "dir" in f]
                out.append(self.line(f"{parent}{{{leaves}}}/", [*each, "each"], names))
                continue
            out.append(self.line(self._path(path), facts, names, others))
        lines, self.nested = nest_paths(out)
        return lines

    def _file_stems(self, folder: Folder) -> set[str]:
        """The stems of a folder's files, read once: each of its sub-folders asks for them."""
        found = self._stems.get(folder.path)
        if found is None:
            entries = [i for i in folder.items if isinstance(i, Entry)]
            found = self._stems[folder.path] = stems(entries)
        return found

    def _names(self, folder: Folder, entries: list[Entry]) -> str:
        up = folder.path.rsplit("/", 1)[0] if "/" in folder.path.strip("/") else "."
        parent = self.listing.folders.get(folder_key(up))
        files = [e for e in entries if not e.is_dir]
        if parent is not None and parent is not folder and len(files) >= MIN_BRACE:
            theirs = self._file_stems(parent)
            mine = [e.name.split(".", 1)[0] for e in files]
            if sum(1 for s in mine if s in theirs) >= _MIRROR_SHARE * len(mine):
                self.mirrored += len(files)
                exts = Counter(e.name[e.name.find(".", 1) :] for e in files if "." in e.name)
                kinds = ", ".join(f"*{x}" for x, _ in exts.most_common(3))
                rest = [e for e in entries if e.is_dir]
                note = f"named after the files of {self._path(parent.path)} ({kinds})"
                return note + (
                    "; " + " ".join(braced(display_items(rest, self.usual))) if rest else ""
                )
        items = display_items(entries, self.usual)
        cap = self.max_names * (2 if self._depth(folder.path) <= 1 else 1)
        if len(items) <= cap:
            return " ".join(braced(items))
        kept = [item.keep for item in items]
        room = cap - sum(kept)
        for i in range(len(items)):
            if room <= 0:
                break
            if not kept[i]:
                kept[i] = True
                room -= 1
        shown = [item for item, k in zip(items, kept, strict=True) if k]
        dropped = [e for item, k in zip(items, kept, strict=True) if not k for e in item.entries]
        self.omitted += len(dropped)
        exts = Counter(extension(e) for e in dropped)
        detail = ", ".join(f"{n:,} {x}" for x, n in exts.most_common(4))
        if len(exts) > 4:
            detail += f", {sum(n for _, n in exts.most_common()[4:]):,} other"
        return " ".join(braced(shown)) + " " + omitted_marker(len(dropped), "name", detail)

    def header(self) -> str:
        entries = [
            i for f in self.listing.folders.values() for i in f.items if isinstance(i, Entry)
        ]
        where = f" of {self.root}" if self.root else ""
        if self.listing.root:
            where = f" of {self.listing.root}"
        facts = counted(len(entries), "entry", "entries")
        if self.listing.style == "du":
            # Without -a, du lists folders only, and a folder's size holds its sub-folders':
            # the total is what the folders that are no entry of another hold.
            size = sum(
                _sizes([i for i in f.items if isinstance(i, Entry)])
                for p, f in self.listing.folders.items()
                if p not in self._du_sizes
            )
            facts += f" ({human_size(size)})" if size else ""
        else:
            dirs = sum(1 for e in entries if e.is_dir)
            size = _sizes([e for e in entries if not e.is_dir])
            facts += f" ({counted(len(entries) - dirs, 'file')}"
            facts += (f", {counted(dirs, 'dir')}" if dirs else "") + (
                f", {human_size(size)}" if size else ""
            )
            facts += ")"
        facts += f" in {counted(len(self.listing.folders), 'folder')}"
        usual = [f"files -{self.usual.file_mode}"] if self.usual.file_mode else []
        if self.usual.dir_mode:
            usual.append(f"dirs d{self.usual.dir_mode}")
        if self.usual.owner:
            usual.append(self.usual.owner)
        if self.usual.day:
            usual.append(self.usual.day)
        if self.usual.size_floor:
            usual.append(f"files of {self.usual.size_floor} where no size is given")
        parts = [f"listing ({self.listing.style}){where}: {facts}"]
        if usual:
            parts.append(
                f"one line per folder, attributes only where unusual (usual: {', '.join(usual)})"
            )
        else:
            parts.append("one line per folder")
        if self.nested:
            parts.append("an indented path continues the one above it")
        if self.mirrored:
            parts.append(f"{self.mirrored:,} files named after their parent folder's counted")
        if self.omitted:
            parts.append(f"{self.omitted:,} names omitted")
        return form_header("; ".join(parts))


def _sizes(entries: list[Entry]) -> int:
    return sum(e.size for e in entries if e.size is not None)


def _du_sizes(listing: Listing) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for folder in listing.folders.values():
        base = "" if folder.path == "." else folder.path.rstrip("/") + "/"
        for item in folder.items:
            if isinstance(item, Entry) and item.size is not None:
                sizes[folder_key(base + item.name)] = item.size
    return sizes


def _render(listing: Listing, source: Source) -> Attempt:
    renderer = _Renderer(
        listing, usual_of(listing, source.config.listing_big_bytes), source.config.listing_max_names
    )
    body = renderer.body()
    dropped: list[str] = ["permissions, links, owner, dates and sizes where usual"]
    if renderer.mirrored:
        dropped.append(f"{renderer.mirrored:,} names of files named after their parent's")
    if renderer.omitted:
        first = source.config.listing_max_names
        dropped.append(f"{renderer.omitted:,} names past the first {first} of a folder")
    return Attempt("\n".join([renderer.header(), *body]), tuple(dropped))


def _keep_error_lines(listing: Listing, source: Source) -> None:
    """An entry or a folder header whose line reads as an error (`errors.py`, `failed.log`,
    `pkg/errors:`) also keeps its line: error lines are never dropped, and the line is the
    unit in which one is kept."""
    if not source.error_lines:
        return
    for folder in listing.folders.values():
        extra = [
            Other(collapse_ws(i.line), True)
            for i in folder.items
            if isinstance(i, Entry) and source.judged.is_error_line(i.line)
        ]
        if folder.header and source.judged.is_error_line(folder.header):
            extra.insert(0, Other(collapse_ws(folder.header), True))
        folder.items += extra


def plan_listing(source: Source) -> Plan | None:
    """The listing compressor, if most of the content's lines are a listing."""
    if source.tool not in _LISTING_TOOLS and bare_names_only(
        source.content, len(source.nonblank_raw)
    ):
        return None  # bare names in one folder, not a listing for this tool (see below)
    raw = source.raw_lines
    if len(raw) > 2 * _PROBE_LINES:
        # Judge a sample from the start and the end before reading the whole of a large text.
        probe = parse_listing(raw[:_PROBE_LINES] + [""] + raw[-_PROBE_LINES:])
        if probe.understood < source.config.structural_min_share * probe.nonblank:
            return None
    listing = parse_listing(raw)
    if listing.nonblank == 0 or not any(
        isinstance(i, Entry) for f in listing.folders.values() for i in f.items
    ):
        return None
    share = listing.understood / listing.nonblank
    names_only = listing.style in ("ls", "find") and all(
        not e.mode for f in listing.folders.values() for e in f.items if isinstance(e, Entry)
    )
    if names_only and listing.style == "ls" and source.tool not in _LISTING_TOOLS:
        # A column of bare words is a listing only when the tool says so or ls -R headed it.
        if len(listing.folders) < 2:
            return None
    reason = f"{share:.0%} of the non-blank lines read as a listing ({listing.style})"
    _keep_error_lines(listing, source)
    return Plan("listing", share, reason, lambda: _render(listing, source))
