"""JSON: keep the sizer's number of items of each large array (or object), by distinctness.

Kept items are copied from the source text with the whitespace around them, so the document
keeps its layout and every line of a kept item is unchanged. Where items were left out:

- in an array, one string element per left-out run, in its place:
  `"… 137 of 150 items omitted; Get with full=true for all"`;
- in an object, one member `"_omitted": "… 12 of 40 keys omitted; Get with full=true for all"`
  where the first left-out member was (an object that already has an `_omitted` key is left
  whole, so the marker can never collide with data).

The first and last items and every item carrying an error line are always kept; the rest are
the most distinct by SimHash. An array of flat records (objects whose values are all
numbers, strings, booleans or null: `pip list --format json`) is a table whose columns are
their keys, and its items are chosen as a table's rows are (table_rows): the first three and
the last, errors, rare values of a status-like field, the largest of numeric fields. Records
are usually all distinct, so SimHash would keep them all; and when the first field names each
record, the marker lists the names it stands for: `"… 126 of 130 items omitted (name: attrs,
certifi, ...); Get with full=true for all"`. Records that carry prose (search results with
their snippets) are sized by distinctness as other items are.

Items are judged (sized and compared) with their numbers, ids and times masked, as log lines
are: records that differ only there carry little new information. Long string values anywhere
are shortened (see json_strings).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable

from sharedctx_server.fit import SizerProfile

from .config import CompressConfig
from .error_lines import ErrorMemo, JudgedLines
from .json_scan import Node, scan_json
from .json_strings import shorten_string
from .markers import OMITTED_KEY, json_items_marker, json_keys_marker
from .masking import mask_line
from .select import fingerprints, pick_distinct
from .sizer import optimal_k
from .table_rows import MAX_KEYS, choose_rows

__all__ = ["BOM", "compress_json", "looks_like_json"]

_CLOSER = {"[": "]", "{": "}"}
_SHAPE_CHARS = 1500  # of an item, judged for likeness: its first fields
_MAX_RECORD_FIELDS = 64  # records with more keys between them are not read as a table
_MAX_CELL_CHARS = 120  # ... nor records with a value longer than this (as written)


BOM = "\ufeff"


def looks_like_json(text: str) -> bool:
    """Whether `text` is one JSON array or object (control characters in strings allowed),
    after a byte-order mark if it has one (PowerShell's `Out-File` writes one)."""
    stripped = text.strip().removeprefix(BOM).lstrip()
    if len(stripped) < 2 or _CLOSER.get(stripped[0]) != stripped[-1]:
        return False
    try:
        json.loads(stripped, strict=False)
    except (ValueError, RecursionError):
        return False
    return True


class _Renderer:
    def __init__(
        self,
        text: str,
        long_strings: list[tuple[int, int]],
        profile: SizerProfile,
        config: CompressConfig,
        judged: JudgedLines,
    ) -> None:
        self.text = text
        self.judged = judged
        self.long_strings = long_strings
        self.long_starts = [s for s, _ in long_strings]
        self.profile = profile
        self.config = config
        # In a one-line document every item shares the one line, so the unit kept unchanged
        # is the item; in a multi-line one a line holding a whole array must stay intact.
        self.multiline = "\n" in text.strip()
        # Per array of records (by its start) whose first field names each record: the names.
        self.record_names: dict[int, tuple[str, list[str]]] = {}

    def slice(self, start: int, end: int) -> str:
        """Source text of [start, end) with its long strings shortened."""
        i = bisect_left(self.long_starts, start)
        if i == len(self.long_starts) or self.long_starts[i] >= end:
            return self.text[start:end]
        parts: list[str] = []
        pos = start
        while i < len(self.long_strings) and self.long_strings[i][0] < end:
            s, e = self.long_strings[i]
            parts.append(self.text[pos:s])
            keep = self.config.json_string_keep_chars
            parts.append(shorten_string(self.text[s:e], keep, self.judged, s))
            pos = e
            i += 1
        parts.append(self.text[pos:end])
        return "".join(parts)

    def render(self, node: Node) -> str:
        """The compressed source text of `node`."""
        if node.kind == "value" or node.depth > self.config.json_max_depth or not node.values:
            return self.slice(node.start, node.end)
        is_object = node.kind == "object"
        starts = [k[0] for k in node.keys] if is_object else [v.start for v in node.values]
        rendered: dict[int, str] = {}

        def item(i: int) -> str:
            """The i-th item as shown, rendered when first asked for: of an array of 14,500
            records a few dozen are shown, and rendering the others had cost a third of
            compressing it."""
            if i not in rendered:
                value = node.values[i]
                inner = self.render(value)
                rendered[i] = self.text[starts[i] : value.start] + inner if is_object else inner
            return rendered[i]

        kept = self.choose(node, starts, item)
        out = [self.text[node.start : starts[0]], item(0)]
        marked = False
        for i in range(1, len(node.values)):
            if i in kept:
                out += [self.text[node.values[i - 1].end : starts[i]], item(i)]
            elif i - 1 in kept and not (is_object and marked):
                out += [self.text[node.values[i - 1].end : starts[i]], self.marker(node, i, kept)]
                marked = True
        out.append(self.text[node.values[-1].end : node.end])
        return "".join(out)

    def marker(self, node: Node, first: int, kept: set[int]) -> str:
        """The placeholder for the left-out items from index `first` on."""
        total = len(node.values)
        if node.kind == "object":
            colon = self.text[node.keys[first][1] : node.values[first].start]
            note = json_keys_marker(total - len(kept), total)
            return json.dumps(OMITTED_KEY) + colon + json.dumps(note, ensure_ascii=False)
        run = first
        while run < total and run not in kept:
            run += 1
        detail = ""
        named = self.record_names.get(node.start)
        if named is not None and run - first <= MAX_KEYS:
            field, names = named
            detail = f"{field}: " + ", ".join(names[first:run])
        return json.dumps(json_items_marker(run - first, total, detail), ensure_ascii=False)

    def choose(self, node: Node, starts: list[int], item: Callable[[int], str]) -> set[int]:
        """Indices of the items to keep (all of them when sizing would not drop any)."""
        n = len(node.values)
        everything = set(range(n))
        is_object = node.kind == "object"
        if n < (self.config.json_min_members if is_object else self.config.json_min_items):
            return everything
        if is_object and any(self.text[s:e] == json.dumps(OMITTED_KEY) for s, e in node.keys):
            return everything
        if self.multiline and self.text.find("\n", node.start, node.end) < 0:
            line_start = self.text.rfind("\n", 0, node.start) + 1
            line_end = self.text.find("\n", node.end)
            if self.judged.carries_error(line_start, line_end if line_end >= 0 else len(self.text)):
                return everything
        records = self.records(node)
        if records is not None:
            return self.choose_records(node, starts, item, *records)
        items = [item(i) for i in range(n)]
        # Judged like log lines: records that differ only in ids, numbers and times are alike.
        # A large item is judged by its start: hashing all of a 1 MiB document's items would
        # cost most of a Put, and how items differ shows in their first fields.
        shapes = [mask_line(item[:_SHAPE_CHARS]) for item in items]
        prints = fingerprints(shapes)
        k = optimal_k(shapes, prints, self.profile)
        if k >= n:
            return everything
        required = {0, n - 1}
        required.update(
            i
            for i, (s, v) in enumerate(zip(starts, node.values, strict=True))
            if self.judged.carries_error(s, v.end)
        )
        return self.worth_markers(node, item, set(pick_distinct(prints, k, required)))

    def worth_markers(self, node: Node, item: Callable[[int], str], kept: set[int]) -> set[int]:
        """`kept`, or every item when the left-out ones cost no more than their markers
        (tiny items: a list of short names)."""
        n = len(node.values)
        markers = sum(
            len(self.marker(node, i, kept)) for i in range(1, n) if i not in kept and i - 1 in kept
        )
        dropped = 0
        for i in range(n):
            if i not in kept:
                dropped += len(item(i))
                if dropped > markers:  # known without rendering the rest
                    return kept
        return set(range(n))

    def records(self, node: Node) -> tuple[list[str], list[list[str]]] | None:
        """An array of flat records as a table: field names and each record's cells; None
        for anything else. Records that carry prose (a value longer than _MAX_CELL_CHARS: the
        snippets of search results) are not rows of a table: each may say something the
        others do not, and the sizer judges them by what they say."""
        if node.kind != "array":
            return None
        columns: dict[str, int] = {}  # key as written -> column
        cells: list[dict[int, str]] = []
        for item in node.values:
            if item.kind != "object" or not item.values or len(item.keys) != len(item.values):
                return None
            if any(v.kind != "value" for v in item.values):
                return None
            row = {}
            for (s, e), v in zip(item.keys, item.values, strict=True):
                if v.end - v.start > _MAX_CELL_CHARS:
                    return None
                column = columns.setdefault(self.text[s:e], len(columns))
                row[column] = _cell(self.text[v.start : v.end])
            cells.append(row)
            if len(columns) > _MAX_RECORD_FIELDS:
                return None
        if not cells:
            return None
        # A key some records lack is an empty cell in theirs (pip's editable location).
        rows = [[row.get(c, "") for c in range(len(columns))] for row in cells]
        return [json.loads(k, strict=False) for k in columns], rows

    def choose_records(
        self,
        node: Node,
        starts: list[int],
        item: Callable[[int], str],
        fields: list[str],
        rows: list[list[str]],
    ) -> set[int]:
        """The records to keep, as a table's rows (table_rows)."""
        errors = (
            i
            for i, (s, v) in enumerate(zip(starts, node.values, strict=True))
            if self.judged.carries_error(s, v.end)
        )
        choice = choose_rows(
            fields,
            rows,
            errors,
            head=self.config.table_head_rows,
            tail=self.config.table_tail_rows,
        )
        if choice.key is not None:
            self.record_names[node.start] = (fields[choice.key], [r[choice.key] for r in rows])
        return self.worth_markers(node, item, choice.keep | {0, len(rows) - 1})


def _cell(token: str) -> str:
    """A scalar's value as a table cell: a string's text, a number as written, null empty."""
    if token.startswith('"'):
        if "\\" not in token:
            return token[1:-1]  # nothing escaped: the text between the quotes, without a parse
        value = json.loads(token, strict=False)
        return value if isinstance(value, str) else token
    return "" if token == "null" else token


def compress_json(
    text: str, profile: SizerProfile, config: CompressConfig, judged: JudgedLines | None = None
) -> str:
    """`text` (a JSON array or object) with large containers sized and long strings shortened.

    `judged` is `text` cut into lines at newlines and `\\n` escapes (a caller that judged them
    already passes its own); items and string lines are judged by it.
    """
    if judged is None:
        judged = JudgedLines(text, ErrorMemo(), escaped_newlines=True)
    scan = scan_json(text, config.json_max_depth, config.json_long_string_chars)
    renderer = _Renderer(text, scan.long_strings, profile, config, judged)
    root = scan.root
    return text[: root.start] + renderer.render(root) + text[root.end :]
