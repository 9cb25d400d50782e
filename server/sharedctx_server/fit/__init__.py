"""The Fit engine as pure functions: scoring, selection, excerpts, adaptive sizing, turns.

No I/O and no state beyond the objects a caller owns (TermStats, SegmentIndex): numpy arrays
in, numpy arrays out. Importable without Redis or gRPC. Exported here: what the server uses,
plus the relevance battery and the adaptive sizer under the names docs/relevance.md and
docs/adaptive-sizer.md give them; everything else is in the submodules.
"""

from sharedctx_server.fit.adaptive_sizer import (
    AGGRESSIVE,
    CONSERVATIVE,
    MODERATE,
    SIZER_PROFILES,
    SizerProfile,
    compute_optimal_k,
    compute_unique_bigram_curve,
    count_clusters,
    count_unique_simhash,
    find_knee,
    optimal_k_from_clusters,
    simhash,
    sizer_profile,
)
from sharedctx_server.fit.bm25 import TermStats
from sharedctx_server.fit.error_signal import has_error_evidence
from sharedctx_server.fit.excerpt_items import Series
from sharedctx_server.fit.excerpts import excerpt_offer, render_excerpt, widened_excerpt
from sharedctx_server.fit.factors import (
    error_indicator,
    forward_references,
    token_density_scores,
)
from sharedctx_server.fit.lexical import lexical_terms
from sharedctx_server.fit.neighbours import Neighbours, neighbour_gain, thread_neighbours
from sharedctx_server.fit.query_terms import query_terms
from sharedctx_server.fit.relevance import (
    RELEVANCE_FLOOR_CURVE,
    RELEVANCE_FLOOR_MAX,
    RELEVANCE_FLOOR_MIN,
    HistoryTurn,
    Message,
    ToolCall,
    arg_text,
    content_tokens,
    group_history_into_turns,
    relevance_to_query,
    scaled_relevance_floor,
    select_naive_turns,
    select_relevant_turns,
)
from sharedctx_server.fit.result import Fill, Form, Reason, Selection, Strategy
from sharedctx_server.fit.scoring import (
    Candidates,
    ScoringOptions,
    needs_factor,
    score_candidates,
)
from sharedctx_server.fit.segment_index import SegmentIndex
from sharedctx_server.fit.segment_relevance import Relevance, SegmentView
from sharedctx_server.fit.segments import Segments, marker_tokens, omission_marker
from sharedctx_server.fit.selection import SelectionOptions, select_entries, smallest_cost
from sharedctx_server.fit.simhash import simhash_many
from sharedctx_server.fit.strategies import select_recent, select_relevant
from sharedctx_server.fit.turn_excerpts import TurnExcerpts
from sharedctx_server.fit.turns import (
    ConversationEntry,
    TurnIndex,
    TurnTexts,
    index_turns,
    update_turns,
)
from sharedctx_server.fit.weights import FACTORS, resolve_weights

__all__ = [
    # adaptive sizer (docs/adaptive-sizer.md)
    "AGGRESSIVE",
    "CONSERVATIVE",
    "MODERATE",
    "SIZER_PROFILES",
    "SizerProfile",
    "compute_optimal_k",
    "optimal_k_from_clusters",
    "compute_unique_bigram_curve",
    "count_clusters",
    "count_unique_simhash",
    "find_knee",
    "simhash",
    "simhash_many",
    "sizer_profile",
    # relevance battery (docs/relevance.md)
    "RELEVANCE_FLOOR_CURVE",
    "RELEVANCE_FLOOR_MAX",
    "RELEVANCE_FLOOR_MIN",
    "HistoryTurn",
    "Message",
    "ToolCall",
    "arg_text",
    "content_tokens",
    "group_history_into_turns",
    "relevance_to_query",
    "scaled_relevance_floor",
    "select_naive_turns",
    "select_relevant_turns",
    # factors computed at put time
    "error_indicator",
    "has_error_evidence",
    "forward_references",
    "token_density_scores",
    # scoring (docs/fit.md)
    "FACTORS",
    "Candidates",
    "Neighbours",
    "ScoringOptions",
    "TermStats",
    "lexical_terms",
    "needs_factor",
    "query_terms",
    "neighbour_gain",
    "resolve_weights",
    "score_candidates",
    "thread_neighbours",
    # excerpts of large entries (docs/excerpts.md)
    "Relevance",
    "Series",
    "SegmentIndex",
    "SegmentView",
    "Segments",
    "TurnExcerpts",
    "excerpt_offer",
    "marker_tokens",
    "omission_marker",
    "render_excerpt",
    "widened_excerpt",
    # selection and the turn strategies
    "ConversationEntry",
    "Fill",
    "Form",
    "Reason",
    "Selection",
    "SelectionOptions",
    "Strategy",
    "TurnIndex",
    "TurnTexts",
    "index_turns",
    "select_entries",
    "select_recent",
    "select_relevant",
    "smallest_cost",
    "update_turns",
]
