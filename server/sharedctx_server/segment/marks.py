"""The mark terms a cut entry's segments carry beside their words (docs/excerpts.md): the rows
holding a column's largest or smallest value (extremes), the lines that define a name
(definition_marks), the rows a table names or a listing lists and the items a line names
(row_name_marks)."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from ..compress.table_parse import find_tables
from .definition_marks import definition_terms
from .extremes import extreme_terms
from .listing_rows import listed_entries
from .row_name_marks import item_name_terms, row_name_terms

__all__ = ["mark_terms"]

log = logging.getLogger(__name__)


def mark_terms(
    lines: list[str], starts: list[int], listing: bool, heads: Sequence[int] = ()
) -> list[dict[int, list[str]]]:
    """Each kind of mark, per segment (first lines `starts`, their heads `heads`, -1 for
    none) that carries some. `listing`: the text is a directory listing (extreme_terms).
    None at all when reading the text failed."""
    try:
        # Read once, for two kinds each.
        tables = find_tables(lines)
        entries = listed_entries(lines) if listing else []
        return [
            extreme_terms(lines, starts, listing, tables, entries),
            definition_terms(lines, starts),
            row_name_terms(starts, tables, entries),
            item_name_terms(lines, starts, heads),
        ]
    except Exception:
        # Marks only add to an entry's words. A reader's bug on one odd text (a table cell
        # holding two numbers had raised) failed the indexing of its namespace, and with it
        # every Fit there: logged, the entry is indexed by its words alone.
        log.exception(
            "reading marks failed on a text of %d lines; indexed without marks", len(lines)
        )
        return []
