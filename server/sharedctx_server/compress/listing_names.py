"""How a listing's entries are written: attributes only where unusual, runs and shared
suffixes folded (see listing.py for the whole form)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache

from .listing_parse import Entry, Listing
from .wording import human_size

__all__ = [
    "MIN_BRACE",
    "Item",
    "Usual",
    "braced",
    "display_items",
    "extension",
    "stems",
    "usual_of",
]

_WELL_KNOWN = re.compile(
    r"^(?:readme|license|licence|copying|notice|changelog|changes|history|makefile|dockerfile"
    r"|containerfile|package\.json|pyproject\.toml|setup\.py|setup\.cfg|cargo\.toml|go\.mod"
    r"|requirements[\w.-]*\.txt|__init__\.py|__main__\.py|main\.\w+|index\.\w+|\.env[\w.]*"
    r"|\.gitignore|conftest\.py)(?:\.\w+)?$",
    re.IGNORECASE,
)
_DIGITS = re.compile(r"\d+")
_MIN_RUN = 4  # shorter numbered runs are listed name by name
MIN_BRACE = 3  # names sharing a suffix before it is written once
_MIN_SUFFIX = 8  # characters: shorter suffixes (".py") cost more in braces than they save
_LARGEST = 5  # the listing's largest files carry their size...
_LARGEST_MIN_BYTES = 64 << 10  # ...when they are at least this big
_FLOOR_SHARE = 0.3  # du: a size at least this share of the files have goes unsaid


@dataclass(frozen=True)
class Usual:
    """The attributes most entries share, said once in the header."""

    file_mode: str
    dir_mode: str
    owner: str
    day: str  # "" when no single day holds most entries
    big: int  # files at least this large carry their size
    sizes: bool  # du: every name carries its size...
    size_floor: str = ""  # ...but files of the commonest size (when common enough)


def _most(values: list[str], share: float) -> str:
    if not values:
        return ""
    value, count = Counter(values).most_common(1)[0]
    return value if count >= share * len(values) else ""


@lru_cache(maxsize=4096)
def _day(date: str) -> str:
    # "Dec 2 02:05" and "2026-12-02 03:08" -> the day, without the time of day.
    parts = date.split()
    return " ".join(p for p in parts if ":" not in p) if parts else ""


def usual_of(listing: Listing, config_big: int) -> Usual:
    """The attributes most entries of `listing` share."""
    entries = [i for f in listing.folders.values() for i in f.items if isinstance(i, Entry)]
    files = [e for e in entries if not e.is_dir and e.type in "-?"]
    sizes = sorted((e.size for e in files if e.size is not None), reverse=True)
    big = config_big
    if len(sizes) > _LARGEST and sizes[_LARGEST - 1] >= _LARGEST_MIN_BYTES:
        big = min(big, sizes[_LARGEST - 1])
    # Much of a `du -a` is files of one block (4.0K): their size is said once, not per name.
    floor = ""
    if listing.style == "du":
        floor = _most([e.size_text for e in files if e.size is not None], _FLOOR_SHARE)
    return Usual(
        file_mode=_most([e.mode for e in files if e.mode], 0.0),
        dir_mode=_most([e.mode for e in entries if e.is_dir and e.mode], 0.0),
        owner=_most([f"{e.owner}:{e.group}" for e in entries if e.owner], 0.0),
        day=_most([_day(e.date) for e in entries if e.date], 0.8),
        big=big,
        sizes=listing.style == "du",
        size_floor=floor,
    )


def _executable(mode: str, usual: str) -> bool:
    """Whether `mode` is `usual` with execute bits added where read bits are."""
    if len(mode) != 9 or len(usual) != 9:
        return False
    want = "".join("x" if i % 3 == 2 and usual[i - 2] == "r" else c for i, c in enumerate(usual))
    return mode == want and mode != usual


def _display(entry: Entry, usual: Usual) -> tuple[str, bool]:
    """How an entry is written, and whether it is unusual (kept however full its folder)."""
    name = entry.name if " " not in entry.name else repr(entry.name)
    notes: list[str] = []
    unusual = False
    suffix = ""
    if entry.is_dir:
        suffix = "/"
        if entry.mode and entry.mode != usual.dir_mode:
            notes.append(f"d{entry.mode}")
    elif entry.type == "l":
        suffix = f" -> {entry.target}"
    elif entry.type in "-?":
        if entry.mode and entry.mode != usual.file_mode:
            if _executable(entry.mode, usual.file_mode):
                suffix = "*"
            else:
                notes.append(f"-{entry.mode}")
    else:
        notes.append(f"{entry.type}{entry.mode}")  # devices, pipes, sockets
    if entry.owner and f"{entry.owner}:{entry.group}" != usual.owner:
        notes.append(f"{entry.owner}:{entry.group}" if entry.group else entry.owner)
    unusual = bool(notes)
    if usual.day and entry.date and _day(entry.date) != usual.day:
        notes.append(entry.date)
        unusual = True
    if usual.sizes:
        # du: sizes are what it is about, none unusual; the commonest one is said
        # once in the header.
        if entry.size_text and (entry.is_dir or entry.size_text != usual.size_floor):
            notes.append(entry.size_text)
    elif entry.size is not None and not entry.is_dir and entry.size >= usual.big:
        notes.append(entry.size_text if not entry.size_text.isdigit() else human_size(entry.size))
        unusual = True
    text = name + suffix + (f" [{' '.join(notes)}]" if notes else "")
    return text, unusual or bool(_WELL_KNOWN.match(entry.name))


@dataclass(slots=True)
class Item:
    """One or more entries as one piece of a folder's line."""

    text: str
    keep: bool  # unusual or well known: shown however full the folder is
    entries: list[Entry]
    suffix: str  # the name's part from its first dot (for brace groups), "" when none


def _suffix(entry: Entry, text: str) -> str:
    """The name's last extension (the key of a brace group), "" when it has none."""
    if text != entry.name + ("/" if entry.is_dir else ""):
        return ""  # annotated names stay whole
    cut = entry.name.rfind(".")
    return entry.name[cut:] + ("/" if entry.is_dir else "") if cut > 0 else ""


def _common_suffix(texts: list[str]) -> str:
    """The longest suffix all `texts` share, starting at a dot (so no stem ends mid-word)."""
    first = texts[0]
    n = len(first)
    for text in texts[1:]:
        k = 0
        while k < n and k < len(text) and text[-1 - k] == first[-1 - k]:
            k += 1
        n = k
    suffix = first[len(first) - n :]
    dot = suffix.find(".")
    # A stem must keep at least one character: the suffix may not be a whole name.
    if dot < 0 or any(len(t) == len(suffix) - dot for t in texts):
        return ""
    return suffix[dot:]


def display_items(entries: list[Entry], usual: Usual) -> list[Item]:
    """Entries as display items, numbered runs folded into one."""
    shown = [_display(e, usual) for e in entries]
    shapes = [_DIGITS.sub("#", e.name) if _DIGITS.search(e.name) else "" for e in entries]
    items: list[Item] = []
    i = 0
    while i < len(entries):
        j = i + 1
        while j < len(entries) and shapes[i] and shapes[j] == shapes[i] and not shown[j][1]:
            j += 1
        if j - i >= _MIN_RUN and not shown[i][1]:
            text = f"{shown[i][0]} … {shown[j - 1][0]} ({j - i} alike)"
            items.append(Item(text, False, entries[i:j], ""))
            i = j
            continue
        text, keep = shown[i]
        items.append(Item(text, keep, [entries[i]], _suffix(entries[i], text)))
        i += 1
    return items


def braced(items: list[Item]) -> list[str]:
    """Item texts, names that share a long suffix written once as `{a,b}suffix`."""
    groups: dict[str, list[int]] = {}
    for i, item in enumerate(items):
        if item.suffix:
            groups.setdefault(item.suffix, []).append(i)
    first_of: dict[int, str] = {}
    skip: set[int] = set()
    for members in groups.values():
        if len(members) < MIN_BRACE:
            continue
        texts = [items[m].text for m in members]
        suffix = _common_suffix(texts)
        if len(suffix) < _MIN_SUFFIX:
            continue
        stems = [t[: len(t) - len(suffix)] for t in texts]
        first_of[members[0]] = "{" + ",".join(stems) + "}" + suffix
        skip.update(members[1:])
    return [first_of.get(i, item.text) for i, item in enumerate(items) if i not in skip]


def extension(entry: Entry) -> str:
    """The extension an entry is counted under in a marker (`dirs` for folders)."""
    if entry.is_dir:
        return "dirs"
    cut = entry.name.rfind(".")
    ext = entry.name[cut:].lower() if cut > 0 else ""
    return ext if 1 < len(ext) <= 10 else "other"


def stems(entries: list[Entry]) -> set[str]:
    """The files' names up to their first dot."""
    return {e.name.split(".", 1)[0] for e in entries if not e.is_dir}
