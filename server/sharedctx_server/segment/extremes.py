"""Which segments hold a table column's largest or smallest value, as mark terms for BM25
(fit.superlatives says which and why; docs/excerpts.md, "Superlatives").

Only tables with a header: a column is asked for by its name. Columns that number rows rather
than measure them (PID, PORT) are left out, as the table compressor leaves them out of its
largest rows. A value that more than MAX_TIES rows share marks none of them: a question for the
smallest of a column of zeros has no one row to point at.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

from ..compress.table_parse import Table, find_tables
from ..compress.table_rows import is_id_column, numeric_values
from ..fit.superlatives import LEAST, MOST, column_words

__all__ = ["MAX_TIES", "extreme_terms"]

MAX_TIES = 3


def extreme_terms(lines: list[str], starts: Sequence[int]) -> dict[int, list[str]]:
    """Per segment (first lines `starts`, ascending) that holds some column's largest or
    smallest value, the mark terms of those columns."""
    marks: dict[int, list[str]] = {}
    for section in find_tables(lines):
        table = section.table
        if table is None or table.header is None:
            continue
        for line, terms in _table_marks(table):
            marks.setdefault(bisect_right(starts, line) - 1, []).extend(terms)
    # Once each: a row holding the largest of three columns is no more the answer.
    return {k: list(dict.fromkeys(terms)) for k, terms in marks.items()}


def _table_marks(table: Table) -> list[tuple[int, list[str]]]:
    """(line, mark terms) of the rows that hold a measuring column's largest or smallest."""
    found: list[tuple[int, list[str]]] = []
    for c, name in enumerate(table.columns):
        words = column_words(name)
        if not words or is_id_column(name):
            continue
        numbers = numeric_values([row[c] if c < len(row) else "" for row in table.values])
        if numbers is None:
            continue
        present = [x for x in numbers if x is not None]
        if len(set(present)) < 2:
            continue
        for mark, value in ((MOST, max(present)), (LEAST, min(present))):
            rows = [r for r, x in enumerate(numbers) if x == value]
            if len(rows) <= MAX_TIES:
                found.extend(
                    (table.rows[r], [mark, *(mark + word for word in words)]) for r in rows
                )
    return found
