"""Tables (`ps`, `kubectl get`, `docker ps`, `pip list`, `df`, CSV, TSV): header, notable
rows, counts.

Kept, in their original order: the header, the first `table_head_rows` and last
`table_tail_rows` rows, every row carrying an error or a warning, rows holding a rare value of
a categorical column (a status seen in at most 5% of the rows, when one value holds most),
and the rows with the largest values of up to four numeric columns (`%CPU`, `RSS`,
`RESTARTS`, `Size`; ids and ports excluded). Each run of left-out rows becomes one marker;
tables of at most three columns whose first column names things (`pip list`) also list those
names in it, so the form still says what is there. After the rows, one line per categorical
column counts its values (`STATUS: Running 40, CrashLoopBackOff 2`).

Aligned rows are re-aligned over the kept rows (empty cells stay visible as gaps); delimited
rows are kept as written.
"""

from __future__ import annotations

from dataclasses import dataclass

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .table_parse import Section, Table, find_tables
from .table_rows import MAX_KEYS, choose_rows
from .whitespace import collapse_ws
from .wording import counted, tally

__all__ = ["plan_table"]


def _aligned_rows(table: Table, positions: list[int]) -> list[str]:
    rows = [table.columns] + [table.values[r] for r in positions]
    last = len(table.columns) - 1
    widths = [max(len(row[c]) for row in rows) for c in range(last)]
    return [
        "  ".join([*(row[c].ljust(widths[c]) for c in range(last)), row[last]]).rstrip()
        for row in rows
    ]


@dataclass(frozen=True)
class _Shown:
    """One table as the form shows it: its lines, and what was kept of it and why."""

    lines: list[str]
    rows: int
    kept: int
    why: list[str]
    counted: list[str]


def _show(table: Table, source: Source, end: int) -> _Shown:
    """`table` (its lines end before line `end`) with its notable rows, the others marked."""
    raw = source.raw_lines
    config = source.config
    # raw_lines are the judged units (a `\r` aside, which judging ignores): judged at once.
    flags = source.judged.notable_flags
    notable = (r for r, i in enumerate(table.rows) if flags[i])
    pick = choose_rows(
        table.columns,
        table.values,
        notable,
        head=config.table_head_rows,
        tail=config.table_tail_rows,
    )
    kept = sorted(pick.keep)
    start = table.header if table.header is not None else table.rows[0]
    if table.style == "aligned":
        shown = _aligned_rows(table, kept)
        header, rows = shown[0], dict(zip(kept, shown[1:], strict=True))
    else:
        # A bordered table's cells are padded to their column's width: one space will do.
        show = collapse_ws if table.style == "bordered" else str.strip
        header = show(raw[start]) if table.header is not None else ""
        rows = {r: show(raw[table.rows[r]]) for r in kept}
    key = pick.key
    body: list[str] = [collapse_ws(raw[i]) for i in table.others if i < start]
    if header:
        body.append(header)
    # Rows and the other lines among them, in their order; each run of left-out rows is one
    # marker, in its place.
    order = sorted(
        [(i, r) for r, i in enumerate(table.rows)] + [(i, -1) for i in table.others if i > start]
    )
    gap: list[int] = []
    for i, r in [*order, (end, -2)]:
        if r >= 0 and r not in rows:
            gap.append(r)
            continue
        if gap:
            detail = ""
            if key is not None and len(gap) <= MAX_KEYS:
                detail = f"{table.columns[key]}: " + ", ".join(table.values[g][key] for g in gap)
            body.append(omitted_marker(len(gap), "row", detail))
            gap = []
        if r >= 0:
            body.append(rows[r])
        elif r == -1:
            body.append(collapse_ws(raw[i]))
    body += [f"{name}: {tally(counts.elements())}" for name, counts in pick.counted]
    counted_names = [name for name, _ in pick.counted]
    return _Shown(body, len(table.rows), len(kept), pick.why, counted_names)


def _summary(what: str, shown: list[_Shown], headers: bool) -> str:
    n = sum(s.rows for s in shown)
    kept = sum(s.kept for s in shown)
    why = ", ".join(dict.fromkeys(["first and last", *(w for s in shown for w in s.why)]))
    heads = "the headers and " if len(shown) > 1 else "the header and " if headers else ""
    summary = f"{what}: {counted(n, 'row')}; kept {heads}{counted(kept, 'row')} ({why})"
    if n > kept:
        summary += f"; {n - kept:,} rows omitted"
    names = list(dict.fromkeys(name for s in shown for name in s.counted))
    if names:
        summary += "; values counted for " + ", ".join(names)
    return summary


def _render(sections: list[Section], source: Source) -> Attempt:
    raw = source.raw_lines
    body: list[str] = []
    shown: list[_Shown] = []
    for section in sections:
        if body and not raw[section.start - 1].strip():
            body.append("")  # stacked tables stay apart as they were
        if section.table is None:
            lines = (raw[i] for i in range(section.start, section.end))
            body += [collapse_ws(line) for line in lines if line.strip()]
            continue
        shown.append(_show(section.table, source, section.end))
        body += shown[-1].lines
    first = sections[0].table if len(sections) == 1 else None
    if first is not None:
        shape = f"{first.style}, {counted(len(first.columns), 'column')}"
        if first.header is None:
            shape += ", no header"
        what = f"table ({shape})"
    else:
        styles = ", ".join(dict.fromkeys(s.table.style for s in sections if s.table))
        what = f"{counted(len(shown), 'table')} ({styles})"
    summary = _summary(what, shown, first is None or first.header is not None)
    omitted = sum(s.rows - s.kept for s in shown)
    dropped = (f"{counted(omitted, 'row')}",) if omitted else ()
    return Attempt("\n".join([form_header(summary), *body]), dropped)


def plan_table(source: Source) -> Plan | None:
    """The table compressor, if the content is mostly one table or stacked tables."""
    sections = find_tables(source.raw_lines)
    if not sections:
        return None
    raw = source.raw_lines
    tables = [s.table for s in sections if s.table]
    understood = sum(
        sum(1 for i in range(s.start, s.end) if raw[i].strip()) - len(s.table.others)
        for s in sections
        if s.table
    )
    nonblank = len(source.nonblank_raw)
    share = understood / nonblank if nonblank else 0.0
    if len(tables) == 1:
        what = f"a table ({tables[0].style}) of {counted(len(tables[0].columns), 'column')}"
    else:
        what = f"{len(tables)} stacked tables"
    reason = f"{share:.0%} of the non-blank lines are {what} under a header"
    return Plan("table", share, reason, lambda: _render(sections, source))
