"""The Fit service: a validated FitQuery in, a FitAnswer out (docs/fit.md).

It feeds the pure engine (`sharedctx_server.fit`) the namespace's cached arrays and, with
include_content, reads the chosen texts. Steady-state Redis cost: the cache's one change-log
read, plus one read of the chosen texts when `include_content` is set.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import numpy.typing as npt

from ..embedding.query_cache import QueryCache
from ..fit import (
    Form,
    Relevance,
    Series,
    Strategy,
    TurnExcerpts,
    excerpt_offer,
    forward_references,
    marker_tokens,
    needs_factor,
    render_excerpt,
    score_candidates,
    select_entries,
    select_recent,
    select_relevant,
    smallest_cost,
    widened_excerpt,
)
from ..fit.clock import CLOCK_MARK, recent_minutes, window_marks
from ..fit.segment_relevance import outside_window
from ..fit.superlatives import cause_asked, frequency_asked, list_asked, ordinal_asked
from ..offload import selection_worth_a_thread, to_the_end
from ..segment import excerpt_lines
from ..state.nscache import NamespaceCache
from ..state.nsstate import EPOCH_MS, NamespaceState
from ..state.store import Store
from ..tokens import TokenCounter
from .fit_answer import Selected, answer
from .fit_model import Filters, FitAnswer, FitQuery

log = logging.getLogger(__name__)

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]


class FitService:
    """Runs Fit queries against the namespace cache."""

    def __init__(
        self,
        store: Store,
        cache: NamespaceCache,
        queries: QueryCache,
        tokens: TokenCounter,
        on_turn_index: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        # Told "reused", "updated" or "rebuilt" for each turn-strategy Fit (a metric).
        self._on_turn_index = on_turn_index
        self._cache = cache
        self._queries = queries
        self._tokens = tokens
        # Tokens of an omission marker line; few distinct counts recur, so they are cached.
        self._marker_tokens = functools.lru_cache(maxsize=4096)(
            functools.partial(marker_tokens, tokens.count)
        )

    async def fit(self, query: FitQuery) -> FitAnswer:
        """Answer one Fit query."""
        query_vector = None
        if (
            query.strategy is Strategy.SCORED
            and query.query
            and needs_factor(query.scoring, "semantic_similarity", query.explain)
        ):
            query_vector = await self._queries.embed_query(query.query)
        async with self._cache.synced(query.namespace) as synced:
            state = synced.state
            args = (query, state, synced.now_ms, query_vector)
            if selection_worth_a_thread(state.size, state.segments.segments):
                # To its end: selection fills the state's lazy caches (turn index, segment
                # table), which the next Fit's catch-up may change once the lock is left.
                selected = await to_the_end(asyncio.to_thread(self._select, *args))
            else:
                selected = self._select(*args)
            result = answer(query, state, selected)
        if query.include_content and result.items:
            await self._read_content(query.namespace, query.selection.budget_tokens, result)
        return result

    def _select(
        self,
        query: FitQuery,
        state: NamespaceState,
        now_ms: int,
        query_vector: npt.NDArray[np.float32] | None,
    ) -> Selected:
        n = state.size
        live = state.live_mask(now_ms)
        eligible = live & _filter_mask(state, query.filters)
        query = _with_recent_window(query, state, eligible)
        if query.strategy is Strategy.SCORED:
            return self._scored(query, state, now_ms, query_vector, live, eligible)
        index, outcome = state.turns.index(state, eligible, query.filters, self._tokens.count)
        if self._on_turn_index is not None:
            self._on_turn_index(outcome)
        orig, comp = state.original_tokens[:n], state.compressed_tokens[:n]
        excerpts = None
        if query.excerpts and state.segments.entries:
            excerpts = TurnExcerpts(_relevance(query, state, eligible), self._marker_tokens)
        scores = np.zeros(n)
        if query.strategy is Strategy.RELEVANT:
            turns = select_relevant(
                index,
                query.query,
                orig,
                comp,
                query.selection,
                estimate_tokens=self._tokens.count,
                excerpts=excerpts,
            )
            # Rows in no turn (filtered out, expired, or no turns at all) score 0.
            in_turn = turns.turn_of >= 0
            scores[in_turn] = turns.relevance[turns.turn_of[in_turn]]
        else:
            turns = select_recent(index, orig, comp, query.selection, excerpts=excerpts)
        relevance = excerpts.relevance if excerpts is not None else None
        return Selected(turns.selection, scores, live, relevance=relevance)

    def _scored(
        self,
        query: FitQuery,
        state: NamespaceState,
        now_ms: int,
        query_vector: npt.NDArray[np.float32] | None,
        live: BoolArray,
        eligible: BoolArray,
    ) -> Selected:
        n = state.size
        candidates = state.candidates()
        lexical = query_refs = None
        if query.query and needs_factor(query.scoring, "lexical_relevance", query.explain):
            lexical = state.terms.bm25_scores(query.terms, size=n)
        relevance = best_segment = None
        if query.excerpts and state.segments.entries:
            relevance = _relevance(query, state, eligible)
            # A long entry's BM25 as a whole dilutes the line that answers: its lexical factor
            # is at least its best segment's (docs/excerpts.md).
            best_segment = np.zeros(n)
            best_segment[relevance.table.slots] = relevance.per_entry_max(relevance.lexical)
        if needs_factor(query.scoring, "forward_reference", query.explain):
            referenced = state.slots_named(list(forward_references(query.query).references))
            query_refs = np.zeros(n, dtype=np.bool_)
            query_refs[referenced] = True
        scored = score_candidates(
            candidates,
            now=(now_ms - EPOCH_MS) / 1000.0,
            query_embedding=query_vector,
            lexical=lexical,
            query_references=query_refs,
            eligible=eligible,
            options=query.scoring,
            explain=query.explain,
            lexical_floor=best_segment,
        )

        def texts(rows: npt.NDArray[np.int64]) -> list[str]:
            return [_relevance_text(state, i) for i in rows.tolist()]

        offer = None
        if relevance is not None:
            orig, comp = candidates.original_tokens, candidates.compressed_tokens
            whole = smallest_cost(query.selection.form, orig, comp)
            offer = excerpt_offer(
                relevance,
                scored.scores,
                whole,
                query.selection.budget_tokens,
                self._marker_tokens,
                full_costs=None if query.selection.form is Form.FULL else orig,
                lexical=lexical,
                series=_series(state, n),
                rewritten=state.rewritten[:n],
            )
        selection = select_entries(
            scored.scores,
            candidates.timestamps,
            candidates.original_tokens,
            candidates.compressed_tokens,
            query.selection,
            eligible=eligible,
            texts=texts,
            order=state.sequence[:n],
            excerpts=offer,
        )
        return Selected(
            selection,
            scored.scores,
            live,
            factors=scored.factors,
            gain=scored.neighbour_gain,
            relevance=relevance,
        )

    async def _read_content(self, namespace: str, budget: int, result: FitAnswer) -> None:
        """Each item's text in its form, read at the version it was selected at; an item
        deleted or rewritten since is left out rather than guessed at."""
        items = result.items
        fulls = [item.form in (Form.FULL, Form.EXCERPT) for item in items]
        stored = await self._store.get_many(namespace, [item.key for item in items], fulls)
        slack = budget - result.total_tokens
        kept = []
        excerpts = []
        for item, found in zip(items, stored, strict=True):
            if found is None or found.stamp.version != item.version:
                slack += item.tokens
                continue
            if item.form is Form.EXCERPT:
                lines = excerpt_lines(found.content)
                text = render_excerpt(lines, item.line_ranges)
                tokens = self._tokens.count(text)
                if tokens - item.tokens > slack:
                    # The plan bounds each boundary's merge (docs/excerpts.md); an entry cut by
                    # an older server may still count more joined, and the budget is a promise.
                    log.warning("excerpt of %r counts more than its parts; left out", item.key)
                    slack += item.tokens
                    continue
                # Reported as counted: usually a few tokens under the plan's bound.
                slack += item.tokens - tokens
                item.tokens = tokens
                item.content = text
                excerpts.append((item, lines))
            else:
                item.content = found.content
            kept.append(item)
        result.items = kept
        # What the fill left over shows the long lines the excerpts cut, best item first.
        for item, lines in sorted(excerpts, key=lambda pair: pair[0].rank):
            widened = widened_excerpt(
                lines, item.line_ranges, item.tokens, slack, self._tokens.count
            )
            if widened is not None:
                slack -= widened[1] - item.tokens
                item.content, item.tokens = widened


def _relevance(query: FitQuery, state: NamespaceState, eligible: BoolArray) -> Relevance:
    """The query's relevance of the eligible cut entries' segments."""
    terms = query.terms
    index = state.segments
    table = index.table()
    raw = index.bm25(terms) if terms else np.zeros(len(table))
    full = index.full_match(terms, lambda term: state.terms.document_frequency(term) > 0)
    ordinal = ordinal_asked(query.query)
    # "The last error": which match was written last is told by its entry's time first, then
    # by its place in the entry (from the bottom up in one that lists newest first).
    times = state.event_ms[table.slot_of].astype(np.float64) if ordinal else None
    places = state.clocks.places(table) if ordinal else None
    # "What happened at 10:10?": the segments stamped in the minutes it names.
    minutes = [term for term in terms if term.startswith(CLOCK_MARK)]
    window = outside = None
    if minutes:
        window = index.bm25(minutes) > 0
        # "In the last 10 minutes" is before no entry; "at 10:05" may be a time a line says.
        stamped = state.clocks.stamped(table)
        outside = outside_window(window, stamped, table.bounds, every_entry=bool(query.recent))
    return Relevance.of(
        table,
        raw,
        eligible,
        index.segments_of,
        full,
        frequency_asked(query.query),
        ordinal,
        times,
        window,
        outside,
        places,
        cause_asked(query.query),
        list_asked(query.query),
    )


def _with_recent_window(query: FitQuery, state: NamespaceState, eligible: BoolArray) -> FitQuery:
    """`query` with the minute marks of the window it names from the newest log time back
    ("what failed in the last 10 minutes?"), when it names one and the logs it may read are
    stamped."""
    minutes = recent_minutes(query.query)
    if minutes is None:
        return query
    latest = state.clocks.latest(eligible, state.event_ms, state.sequence)
    return query if latest is None else replace(query, recent=tuple(window_marks(latest, minutes)))


def _series(state: NamespaceState, n: int) -> Series:
    """Which rows may be runs of one command: tool outputs of one tool in one thread that
    echo the same command, or echo none (then hit_items compares how they open)."""
    return Series(state.command[:n], state.sequence[:n], state.echoed[:n])


def _relevance_text(state: NamespaceState, row: int) -> str:
    info = state.info[row]
    return info.relevance_text if info is not None else ""


def _filter_mask(state: NamespaceState, filters: Filters) -> BoolArray:
    n = state.size
    mask = np.ones(n, dtype=np.bool_)
    kinds = state.kind[:n]
    if filters.include_kinds:
        mask &= np.isin(kinds, [int(k) for k in filters.include_kinds])
    if filters.exclude_kinds:
        mask &= ~np.isin(kinds, [int(k) for k in filters.exclude_kinds])
    if filters.by_entry:
        # Per-entry sets: a loop, but only when such a filter is asked for.
        for i, info in enumerate(state.info[:n]):
            if info is None or not mask[i]:
                continue
            if filters.include_tags and not info.tags & filters.include_tags:
                mask[i] = False
            elif filters.exclude_tags and info.tags & filters.exclude_tags:
                mask[i] = False
            elif filters.include_agent_ids and info.agent_id not in filters.include_agent_ids:
                mask[i] = False
            elif filters.exclude_agent_ids and info.agent_id in filters.exclude_agent_ids:
                mask[i] = False
            elif filters.threads and info.thread not in filters.threads:
                mask[i] = False
    return mask
