"""A Fit query's BM25 terms: its words, then the mark terms it asks for (docs/fit.md,
"Lexical terms")."""

from __future__ import annotations

from .clock import clock_query_terms
from .definitions import definition_query_terms
from .lexical import lexical_terms
from .row_names import row_name_query_terms
from .superlatives import superlative_terms

__all__ = ["query_terms"]


def query_terms(query: str) -> list[str]:
    """A Fit query's BM25 terms: its words' (lexical_terms), then its superlatives' marks, the
    minute marks of the times of day it names (fit.clock), the definition marks of the
    names of code it asks about (fit.definitions) and the name marks of its words
    (fit.row_names)."""
    return (
        lexical_terms(query)
        + superlative_terms(query)
        + clock_query_terms(query)
        + definition_query_terms(query)
        + row_name_query_terms(query)
    )
