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

from .markers import form_header, omitted_marker
from .plan import Attempt, Plan
from .source import Source
from .table_parse import Table, find_table
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


def _render(table: Table, source: Source) -> Attempt:
    raw = source.raw_lines
    config = source.config
    notable = (r for r, i in enumerate(table.rows) if source.judged.is_notable(raw[i]))
    pick = choose_rows(
        table.columns,
        table.values,
        notable,
        head=config.table_head_rows,
        tail=config.table_tail_rows,
    )
    kept = sorted(pick.keep)
    n = len(table.rows)
    start = table.header if table.header is not None else table.rows[0]
    if table.style == "aligned":
        shown = _aligned_rows(table, kept)
        header, rows = shown[0], dict(zip(kept, shown[1:], strict=True))
    else:
        header = raw[start].strip() if table.header is not None else ""
        rows = {r: raw[table.rows[r]].strip() for r in kept}
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
    for i, r in [*order, (len(raw), -2)]:
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
    omitted = n - len(kept)
    why = ", ".join(["first and last", *pick.why])
    shape = f"{table.style}, {counted(len(table.columns), 'column')}"
    if table.header is None:
        shape += ", no header"
    summary = (
        f"table ({shape}): {counted(n, 'row')}; kept {'the header and ' if header else ''}"
        f"{counted(len(kept), 'row')} ({why})"
    )
    if omitted:
        summary += f"; {omitted:,} rows omitted"
    if pick.counted:
        summary += "; values counted for " + ", ".join(name for name, _ in pick.counted)
    dropped = (f"{counted(omitted, 'row')}",) if omitted else ()
    return Attempt("\n".join([form_header(summary), *body]), dropped)


def plan_table(source: Source) -> Plan | None:
    """The table compressor, if the content is mostly one table."""
    table = find_table(source.raw_lines)
    if table is None:
        return None
    nonblank = len(source.nonblank_raw)
    understood = nonblank - len(table.others)
    share = understood / nonblank if nonblank else 0.0
    reason = (
        f"{share:.0%} of the non-blank lines are a table ({table.style}) of "
        f"{counted(len(table.columns), 'column')} under a header"
    )
    return Plan("table", share, reason, lambda: _render(table, source))
