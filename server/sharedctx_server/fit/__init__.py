"""The Fit engine as pure functions: scoring, selection, adaptive sizing, relevance turns.

No I/O and no state beyond the objects a caller owns (TermStats): numpy arrays in, numpy
arrays out. Importable without Redis or gRPC.
"""

from sharedctx_server.fit.adaptive_sizer import (
    AGGRESSIVE,
    CONSERVATIVE,
    MODERATE,
    SIZER_PROFILES,
    SizerProfile,
    compute_optimal_k,
    compute_unique_bigram_curve,
    count_unique_simhash,
    find_knee,
    simhash,
    sizer_profile,
)
from sharedctx_server.fit.excerpts import (
    Excerpt,
    ExcerptOffer,
    Relevance,
    SegmentView,
    excerpt_offer,
    plan_excerpt,
    render_excerpt,
    segment_relevance,
)
from sharedctx_server.fit.factors import (
    ForwardRefs,
    error_indicator,
    forward_reference_score,
    forward_references,
    token_density_score,
    token_density_scores,
)
from sharedctx_server.fit.lexical import BM25_B, BM25_K1, TermStats, lexical_terms
from sharedctx_server.fit.neighbours import Neighbours, neighbour_gain, thread_neighbours
from sharedctx_server.fit.normalise import SimilarityNorm, competition_ranks, normalise_similarity
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
    Scores,
    ScoringOptions,
    needs_factor,
    score_candidates,
)
from sharedctx_server.fit.segment_index import SegmentIndex, SegmentTable
from sharedctx_server.fit.segments import Segments, omission_marker
from sharedctx_server.fit.selection import (
    SelectionOptions,
    TextSource,
    select_entries,
    smallest_cost,
)
from sharedctx_server.fit.simhash import simhash_many
from sharedctx_server.fit.strategies import (
    ConversationEntry,
    TurnIndex,
    TurnSelection,
    TurnTexts,
    index_turns,
    select_recent,
    select_relevant,
    update_turns,
)
from sharedctx_server.fit.turn_excerpts import TurnExcerpts
from sharedctx_server.fit.weights import FACTORS, WEIGHT_PRESETS, resolve_weights

__all__ = [
    # adaptive sizer (docs/adaptive-sizer.md)
    "AGGRESSIVE",
    "CONSERVATIVE",
    "MODERATE",
    "SIZER_PROFILES",
    "SizerProfile",
    "compute_optimal_k",
    "compute_unique_bigram_curve",
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
    "ForwardRefs",
    "error_indicator",
    "forward_reference_score",
    "forward_references",
    "token_density_score",
    "token_density_scores",
    # lexical relevance
    "BM25_B",
    "BM25_K1",
    "TermStats",
    "lexical_terms",
    # scoring
    "FACTORS",
    "WEIGHT_PRESETS",
    "Candidates",
    "Neighbours",
    "Scores",
    "ScoringOptions",
    "SimilarityNorm",
    "competition_ranks",
    "neighbour_gain",
    "normalise_similarity",
    "resolve_weights",
    "needs_factor",
    "score_candidates",
    "thread_neighbours",
    # excerpts of large entries (docs/excerpts.md)
    "Excerpt",
    "ExcerptOffer",
    "Relevance",
    "SegmentIndex",
    "SegmentTable",
    "SegmentView",
    "Segments",
    "TurnExcerpts",
    "excerpt_offer",
    "omission_marker",
    "plan_excerpt",
    "render_excerpt",
    "segment_relevance",
    # selection and strategies
    "ConversationEntry",
    "TurnIndex",
    "TurnTexts",
    "Fill",
    "Form",
    "Reason",
    "Selection",
    "SelectionOptions",
    "Strategy",
    "TextSource",
    "TurnSelection",
    "select_entries",
    "smallest_cost",
    "update_turns",
    "index_turns",
    "select_recent",
    "select_relevant",
]
