"""The Fit RPC's work: parse the request, select from the namespace cache, build the reply.

The selection itself is `sharedctx_server.fit` (pure); this module feeds it the cached arrays
and turns its result into the response. Steady-state Redis cost: the cache's one change-log
read, plus one read of the chosen texts when `include_content` is set.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from sharedctx.v1 import sharedctx_pb2 as pb

from ..edge import validation as V
from ..edge.convert import ms_to_timestamp
from ..embedding.query_cache import QueryCache
from ..errors import InvalidArgument, LimitExceeded
from ..fit import (
    FACTORS,
    ConversationEntry,
    Fill,
    Form,
    Reason,
    Relevance,
    ScoringOptions,
    SegmentView,
    Selection,
    SelectionOptions,
    TurnExcerpts,
    TurnIndex,
    TurnTexts,
    excerpt_offer,
    forward_references,
    index_turns,
    lexical_terms,
    needs_factor,
    omission_marker,
    render_excerpt,
    resolve_weights,
    score_candidates,
    select_entries,
    select_recent,
    select_relevant,
    sizer_profile,
    smallest_cost,
    update_turns,
)
from ..model import Kind
from ..segment import text_lines
from ..settings import Settings
from ..state.nscache import NamespaceCache
from ..state.nsstate import EPOCH_MS, NamespaceState, SlotInfo
from ..state.store import Store
from ..tokens import TokenCounter

log = logging.getLogger(__name__)

BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

_STRATEGIES = {0: "scored", 1: "scored", 2: "relevant", 3: "recent"}
_FORMS = {0: Form.COMPRESSED, 1: Form.COMPRESSED, 2: Form.FULL, 3: Form.AUTO}
_FILLS = {0: Fill.SKIP, 1: Fill.SKIP, 2: Fill.STOP}
_ADAPTIVE = {0: None, 1: None, 2: "conservative", 3: "moderate", 4: "aggressive"}
_FORM_TO_PROTO = {
    Form.FULL: pb.FORM_FULL,
    Form.COMPRESSED: pb.FORM_COMPRESSED,
    Form.EXCERPT: pb.FORM_EXCERPT,
}
# explain lists, per cut candidate, the segments its excerpt shows plus this many best others.
_EXPLAIN_SEGMENTS = 5
# Above this many candidates the scoring runs in a worker thread, so the event loop keeps
# serving other RPCs meanwhile (numpy releases the GIL in the heavy parts).
_OFFLOAD_ROWS = 5000
# Turn indexes kept per namespace, one per filter set (each holds the turns' text once more).
_KEPT_TURN_INDEXES = 2


@dataclass(frozen=True)
class FitParams:
    """A validated Fit request."""

    namespace: str
    query: str
    strategy: str
    weights: FloatArray
    scoring: ScoringOptions
    selection: SelectionOptions
    filters: pb.Filters
    include_content: bool
    explain: bool
    excerpts: bool = True


@dataclass
class _Outcome:
    selection: Selection
    scores: FloatArray
    candidates: BoolArray  # live rows (the candidates counted in the reply)
    factors: FloatArray | None = None
    gain: FloatArray | None = None
    relevance: Relevance | None = None  # of the segments of cut entries, when excerpts are on


@dataclass(frozen=True)
class _Wanted:
    """What include_content must read for one reply entry: the full form or not, the entry's
    version when it was selected, and an excerpt's line ranges."""

    full: bool
    version: int
    ranges: tuple[tuple[int, int], ...] = ()


def _enum(value: int, table: Mapping[int, object], name: str) -> object:
    if value not in table:
        raise InvalidArgument(name, f"unknown value {value}")
    return table[value]


def parse(req: pb.FitRequest, settings: Settings) -> FitParams:
    """Validate a FitRequest; InvalidArgument names the field, LimitExceeded the limit."""
    limits = settings.limits
    namespace = V.check_namespace(req.namespace, limits)
    if req.budget_tokens <= 0:
        raise InvalidArgument("budget_tokens", f"must be > 0; got {req.budget_tokens}")
    if req.budget_tokens > limits.max_budget_tokens:
        raise LimitExceeded(
            "max_budget_tokens",
            f"budget_tokens {req.budget_tokens} exceeds the server's limit of "
            f"{limits.max_budget_tokens}",
        )
    V.check_content(req.query, limits, "query")
    strategy = str(_enum(req.strategy, _STRATEGIES, "strategy"))
    if req.form == pb.FORM_EXCERPT:
        raise InvalidArgument(
            "form",
            "FORM_EXCERPT is a reply form: ask for compressed, full or auto "
            "(excerpts come back on their own unless excerpts is false)",
        )
    overrides = {f: getattr(req.weights, f) for f in FACTORS if req.weights.HasField(f)}
    weights = resolve_weights(req.preset or "default", overrides)
    if strategy == "scored" and not weights.any():
        raise InvalidArgument("weights", "every weight is 0; give at least one factor a weight > 0")
    decay = req.recency_decay_rate if req.HasField("recency_decay_rate") else 1e-4
    if not math.isfinite(decay) or decay < 0:
        raise InvalidArgument("recency_decay_rate", f"must be a finite number >= 0; got {decay}")
    min_score = req.min_score if req.HasField("min_score") else 0.0
    if math.isnan(min_score):
        raise InvalidArgument("min_score", "must be a number")
    adaptive = _enum(req.adaptive, _ADAPTIVE, "adaptive")
    selection = SelectionOptions(
        budget_tokens=int(req.budget_tokens),
        keep_recent=req.keep_recent if req.HasField("keep_recent") else 2,
        fill=_enum(req.fill, _FILLS, "fill"),  # type: ignore[arg-type]
        max_entries=req.max_entries if req.HasField("max_entries") else None,
        adaptive=sizer_profile(str(adaptive)) if adaptive else None,
        form=_enum(req.form, _FORMS, "form"),  # type: ignore[arg-type]
        compress_threshold=(
            int(req.compress_threshold) if req.HasField("compress_threshold") else None
        ),
        min_score=min_score,
    )
    scoring = ScoringOptions(
        weights=tuple(float(w) for w in weights),
        recency_decay_rate=decay,
        expand_neighbours=req.expand_neighbours if req.HasField("expand_neighbours") else True,
    )
    for kind in (*req.filters.include_kinds, *req.filters.exclude_kinds):
        if kind not in Kind._value2member_map_:
            raise InvalidArgument("filters", f"unknown kind {kind}")
    return FitParams(
        namespace=namespace,
        query=req.query,
        strategy=strategy,
        weights=weights,
        scoring=scoring,
        selection=selection,
        filters=req.filters,
        include_content=req.include_content,
        explain=req.explain,
        excerpts=settings.excerpts and (req.excerpts if req.HasField("excerpts") else True),
    )


class FitService:
    """Runs Fit requests against the namespace cache."""

    def __init__(
        self,
        store: Store,
        cache: NamespaceCache,
        queries: QueryCache,
        tokens: TokenCounter,
        settings: Settings,
        on_turn_index: Callable[[str], None] | None = None,
    ) -> None:
        self._store = store
        # Told "reused", "updated" or "rebuilt" for each turn-strategy Fit (a metric).
        self._on_turn_index = on_turn_index
        self._cache = cache
        self._queries = queries
        self._tokens = tokens
        self._settings = settings
        # Tokens of an omission marker line; few distinct counts recur, so they are cached.
        self._marker_tokens = functools.lru_cache(maxsize=4096)(
            lambda lines: tokens.count(omission_marker(lines) + "\n")
        )

    async def fit(self, req: pb.FitRequest) -> pb.FitResponse:
        """Answer one Fit request."""
        started = time.perf_counter()
        params = parse(req, self._settings)
        query_vector = None
        if (
            params.strategy == "scored"
            and params.query
            and needs_factor(params.scoring, "semantic_similarity", params.explain)
        ):
            query_vector = await self._queries.embed_query(params.query)
        async with self._cache.synced(params.namespace) as synced:
            state = synced.state
            args = (params, state, synced.now_ms, query_vector)
            if state.size > _OFFLOAD_ROWS:
                outcome = await asyncio.to_thread(self._select, *args)
            else:
                outcome = self._select(*args)
            reply, wanted = _reply(params, state, outcome)
        if params.include_content and reply.entries:
            await self._attach_content(params.namespace, reply, wanted)
        reply.server_ms = (time.perf_counter() - started) * 1000.0
        return reply

    def _select(
        self,
        params: FitParams,
        state: NamespaceState,
        now_ms: int,
        query_vector: npt.NDArray[np.float32] | None,
    ) -> _Outcome:
        n = state.size
        live = state.live_mask(now_ms)
        eligible = live & _filter_mask(state, params.filters)
        if params.strategy == "scored":
            return self._scored(params, state, now_ms, query_vector, live, eligible)
        index = self._turn_index(state, eligible, params.filters)
        orig, comp = state.original_tokens[:n], state.compressed_tokens[:n]
        excerpts = self._turn_excerpts(params, state, eligible)
        if params.strategy == "relevant":
            turns = select_relevant(
                index,
                params.query,
                orig,
                comp,
                params.selection,
                estimate_tokens=self._tokens.count,
                excerpts=excerpts,
            )
            # Rows in no turn (filtered out, expired, or no turns at all) score 0.
            scores = np.zeros(n)
            in_turn = turns.turn_of >= 0
            scores[in_turn] = turns.relevance[turns.turn_of[in_turn]]
        else:
            turns = select_recent(index, orig, comp, params.selection, excerpts=excerpts)
            scores = np.zeros(n)
        relevance = excerpts.relevance if excerpts is not None else None
        return _Outcome(turns.selection, scores, live, relevance=relevance)

    def _turn_excerpts(
        self, params: FitParams, state: NamespaceState, eligible: BoolArray
    ) -> TurnExcerpts | None:
        """The candidates' segments and their relevance for RELEVANT and RECENT."""
        if not (params.excerpts and state.segments.entries):
            return None
        return TurnExcerpts(_relevance(params, state, eligible), self._marker_tokens)

    def _turn_index(
        self, state: NamespaceState, eligible: BoolArray, filters: pb.Filters
    ) -> TurnIndex:
        """The namespace's turns for this eligibility. They depend only on the entries and on
        which are eligible, so they are kept per filter set: reused while nothing changed,
        else brought up to date by regrouping the turns from the earliest change on (for an
        agent's usual writes, the last one or two), rebuilt when that is all of them."""
        kept: dict[bytes, _KeptTurns] = state.keep("turn_indexes", dict)
        key = filters.SerializeToString(deterministic=True)
        entry = kept.pop(key, None)
        index, outcome = None, "rebuilt"
        edits = state.edits_since(entry.mark) if entry is not None else None
        if entry is not None and edits == [] and np.array_equal(entry.eligible, eligible):
            index, outcome = entry.index, "reused"
        else:
            entries = _conversation_entries(state)  # built once, for update or rebuild
            if entry is not None and edits is not None:
                index = update_turns(entry.index, entries, eligible, edits)
                outcome = "updated" if index is not None else outcome
        if self._on_turn_index is not None:
            self._on_turn_index(outcome)
        if index is None:
            index = index_turns(
                entries,
                eligible,
                self._tokens.count,
                order=_chronological(state, eligible),
                # The tokenising of this filter set's previous index, where there was one.
                texts=entry.index.texts if entry is not None else TurnTexts(),
            )
        kept[key] = _KeptTurns(index, state.edit_mark, eligible)
        while len(kept) > _KEPT_TURN_INDEXES:
            del kept[next(iter(kept))]  # the least recently used filter set
        return index

    def _scored(
        self,
        params: FitParams,
        state: NamespaceState,
        now_ms: int,
        query_vector: npt.NDArray[np.float32] | None,
        live: BoolArray,
        eligible: BoolArray,
    ) -> _Outcome:
        n = state.size
        candidates = state.candidates()
        lexical = query_refs = None
        if params.query and needs_factor(params.scoring, "lexical_relevance", params.explain):
            lexical = state.terms.bm25_scores(lexical_terms(params.query), size=n)
        relevance = best_segment = None
        if params.excerpts and state.segments.entries:
            relevance = _relevance(params, state, eligible)
            # A long entry's BM25 as a whole dilutes the line that answers: its lexical factor
            # is at least its best segment's (docs/excerpts.md).
            best_segment = np.zeros(n)
            best_segment[relevance.table.slots] = relevance.per_entry_max(relevance.lexical)
        if needs_factor(params.scoring, "forward_reference", params.explain):
            referenced = state.slots_named(list(forward_references(params.query).references))
            query_refs = np.zeros(n, dtype=np.bool_)
            query_refs[referenced] = True
        scored = score_candidates(
            candidates,
            now=(now_ms - EPOCH_MS) / 1000.0,
            query_embedding=query_vector,
            lexical=lexical,
            query_references=query_refs,
            eligible=eligible,
            options=params.scoring,
            explain=params.explain,
            lexical_floor=best_segment,
        )

        def texts(rows: npt.NDArray[np.int64]) -> list[str]:
            return [_relevance_text(state, i) for i in rows.tolist()]

        offer = None
        if relevance is not None:
            offer = excerpt_offer(
                relevance,
                scored.scores,
                smallest_cost(
                    params.selection.form, candidates.original_tokens, candidates.compressed_tokens
                ),
                params.selection.budget_tokens,
                self._marker_tokens,
            )
        selection = select_entries(
            scored.scores,
            candidates.timestamps,
            candidates.original_tokens,
            candidates.compressed_tokens,
            params.selection,
            eligible=eligible,
            texts=texts,
            order=state.sequence[:n],
            excerpts=offer,
        )
        return _Outcome(
            selection,
            scored.scores,
            live,
            factors=scored.factors,
            gain=scored.neighbour_gain,
            relevance=relevance,
        )

    async def _attach_content(
        self, namespace: str, reply: pb.FitResponse, wanted: list[_Wanted]
    ) -> None:
        fulls = [w.full for w in wanted]
        stored = await self._store.get_many(namespace, [e.key for e in reply.entries], fulls)
        kept = []
        for entry, found, want in zip(reply.entries, stored, wanted, strict=True):
            if found is None:
                continue  # deleted since the selection: leave it out rather than guess
            if found.stamp.version != want.version:
                continue  # rewritten since the selection: its size is no longer what fitted
            if entry.form == pb.FORM_EXCERPT:
                text = render_excerpt(text_lines(found.content), want.ranges)
                if self._tokens.count(text) > entry.tokens:
                    # The parts were counted one by one; joined, they never tokenised to more
                    # in our measurements, but the budget is a promise.
                    log.warning("excerpt of %r counts more than its parts; left out", entry.key)
                    continue
                entry.content = text
            else:
                entry.content = found.content
            kept.append(entry)
        if len(kept) != len(reply.entries):
            del reply.entries[:]
            reply.entries.extend(kept)
            reply.total_tokens = sum(e.tokens for e in kept)


def _relevance(params: FitParams, state: NamespaceState, eligible: BoolArray) -> Relevance:
    """The query's relevance of the eligible cut entries' segments."""
    terms = lexical_terms(params.query) if params.query else []
    index = state.segments
    raw = index.bm25(terms) if terms else np.zeros(len(index.table()))
    return Relevance.of(index.table(), raw, eligible, index.segments_of)


def _relevance_text(state: NamespaceState, row: int) -> str:
    info = state.info[row]
    return info.relevance_text if info is not None else ""


def _filter_mask(state: NamespaceState, filters: pb.Filters) -> BoolArray:
    n = state.size
    mask = np.ones(n, dtype=np.bool_)
    kinds = state.kind[:n]
    if filters.include_kinds:
        mask &= np.isin(kinds, list(filters.include_kinds))
    if filters.exclude_kinds:
        mask &= ~np.isin(kinds, list(filters.exclude_kinds))
    include_tags, exclude_tags = set(filters.include_tags), set(filters.exclude_tags)
    include_agents, exclude_agents = set(filters.include_agent_ids), set(filters.exclude_agent_ids)
    threads = set(filters.threads)
    if include_tags or exclude_tags or include_agents or exclude_agents or threads:
        # Per-entry sets: a loop, but only when such a filter is asked for.
        for i, info in enumerate(state.info[:n]):
            if info is None or not mask[i]:
                continue
            if include_tags and not info.tags & include_tags:
                mask[i] = False
            elif exclude_tags and info.tags & exclude_tags:
                mask[i] = False
            elif include_agents and info.agent_id not in include_agents:
                mask[i] = False
            elif exclude_agents and info.agent_id in exclude_agents:
                mask[i] = False
            elif threads and info.thread not in threads:
                mask[i] = False
    return mask


@dataclass(frozen=True)
class _KeptTurns:
    """A turn index, the journal mark it reflects and the eligibility it was built for."""

    index: TurnIndex
    mark: int
    eligible: BoolArray


def _conversation_entries(state: NamespaceState) -> list[ConversationEntry]:
    """Every row as the turn strategies see it, each built once per write of its entry."""
    cache: dict[int, tuple[SlotInfo, ConversationEntry]] = state.keep("conversation", dict)
    out = []
    for i, info in enumerate(state.info[: state.size]):
        if info is None:
            out.append(_GONE)
            continue
        hit = cache.get(i)
        if hit is None or hit[0] is not info:  # a new SlotInfo is a new write of the slot
            hit = cache[i] = (info, _conversation_entry(state, i))
        out.append(hit[1])
    return out


def _chronological(state: NamespaceState, eligible: BoolArray) -> npt.NDArray[np.int64]:
    """Eligible rows by (event time, write order): the order of _conversation_entry's
    created_at strings, without sorting strings."""
    rows = np.flatnonzero(eligible)
    return rows[np.lexsort((state.sequence[rows], state.event_ms[rows]))]


# Stands for a freed row, which is never eligible.
_GONE = ConversationEntry("", None)


def _conversation_entry(state: NamespaceState, i: int) -> ConversationEntry:
    info = state.info[i]
    # Sortable and the same on every replica: event time, then write order.
    created = f"{int(state.event_ms[i]):015d}.{int(state.sequence[i]):012d}"
    if info is None:
        return ConversationEntry(created, None)
    if info.role:
        return ConversationEntry(created, info.role, info.relevance_text)
    return ConversationEntry(
        created, None, "", tool=info.tool_name or "output", args=info.relevance_text[:400]
    )


def _reply(
    params: FitParams, state: NamespaceState, outcome: _Outcome
) -> tuple[pb.FitResponse, list[_Wanted]]:
    """The reply, and for each of its entries what include_content must read."""
    sel = outcome.selection
    live = outcome.candidates
    reply = pb.FitResponse(
        total_tokens=sel.total_tokens,
        candidates=int(live.sum()),
    )
    reply.left_out = reply.candidates - int(sel.indices.size)
    wanted = []
    for idx, rank, form, tokens in zip(
        sel.indices.tolist(),
        sel.ranks.tolist(),
        sel.forms.tolist(),
        sel.tokens.tolist(),
        strict=True,
    ):
        info = state.info[idx]
        reply.entries.append(
            pb.FitEntry(
                key=info.key if info is not None else "",
                rank=rank,
                score=float(outcome.scores[idx]),
                form=_FORM_TO_PROTO[Form(form)],
                tokens=tokens,
                event_time=ms_to_timestamp(int(state.event_ms[idx])),
                kind=cast(Any, int(state.kind[idx])),
                thread=info.thread if info is not None else "",
            )
        )
        ranges: tuple[tuple[int, int], ...] = ()
        excerpt = sel.excerpts.get(idx)
        if excerpt is not None:
            ranges = tuple(excerpt.ranges())
            entry = reply.entries[-1]
            entry.total_lines = excerpt.total_lines
            for first, last in ranges:
                entry.line_ranges.add(first=first, last=last)
        full = form in (Form.FULL, Form.EXCERPT)
        wanted.append(_Wanted(full, int(state.entry_version[idx]), ranges))
    reasons = sel.reasons[live]
    counts = np.bincount(reasons.astype(np.int64), minlength=len(Reason))
    for code, count in enumerate(counts.tolist()):
        if count and code != Reason.SELECTED:
            reply.left_out_by_reason[Reason(code).label] = count
    if params.strategy == "scored":
        for name, weight in zip(FACTORS, params.weights.tolist(), strict=True):
            reply.weights[name] = weight
    if params.explain:
        _explain(reply, state, outcome)
    return reply, wanted


def _explain(reply: pb.FitResponse, state: NamespaceState, outcome: _Outcome) -> None:
    rows = np.flatnonzero(outcome.candidates)
    order = rows[np.lexsort((state.sequence[rows], -outcome.scores[rows]))]
    for i in order.tolist():
        info = state.info[i]
        candidate = pb.FitCandidate(
            key=info.key if info is not None else "",
            score=float(outcome.scores[i]),
            reason=outcome.selection.reason_of(i).label,
            original_tokens=int(state.original_tokens[i]),
            compressed_tokens=int(state.compressed_tokens[i]),
            embedded=bool(state.embedded[i]),
        )
        if outcome.factors is not None:
            for name, value in zip(FACTORS, outcome.factors[i].tolist(), strict=True):
                candidate.factors[name] = value
            if not state.embedded[i]:
                # Not embedded yet: the semantic factor is unknown, not zero.
                candidate.factors.pop("semantic_similarity", None)
        if outcome.gain is not None:
            candidate.neighbour_gain = float(outcome.gain[i])
        if outcome.relevance is not None and i in state.segments:
            excerpt = outcome.selection.excerpts.get(i)
            view = outcome.relevance.view(i)
            _explain_segments(candidate, view, excerpt.covered if excerpt is not None else [])
        reply.explain.append(candidate)


def _explain_segments(candidate: pb.FitCandidate, view: SegmentView, chosen: list[int]) -> None:
    """The segments an excerpt shows and the best others, in text order."""
    relevance = view.relevance
    best = np.argsort(-relevance, kind="stable")[:_EXPLAIN_SEGMENTS]
    shown = sorted(set(chosen) | {int(i) for i in best if relevance[i] > 0})
    starts, lines, tokens = view.segments.starts, view.segments.lines, view.segments.tokens
    picked = set(chosen)
    for i in shown:
        candidate.segments.add(
            first_line=int(starts[i]) + 1,
            last_line=int(starts[i] + lines[i]),
            tokens=int(tokens[i]),
            relevance=float(relevance[i]),
            chosen=i in picked,
        )
