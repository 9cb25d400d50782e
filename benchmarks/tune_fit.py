"""Explore SCORED parameters on LoCoMo in-process (no server), to choose Fit's defaults.

    python -m benchmarks.tune_fit --dataset path/to/locomo_dev.json

It builds each conversation's namespace state with the server's own code (NamespaceState,
the same token counter and model), embeds every turn and question once, then scores each
candidate parameter set with the pure Fit library. The figures that count are the ones
`benchmarks.quality` measures through the gRPC API; this is the fast inner loop.
"""

from __future__ import annotations

import argparse
import itertools
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
from sharedctx_server.embedding import Embedder, ModelSpec, content_hash
from sharedctx_server.fit import (
    FACTORS,
    ScoringOptions,
    SelectionOptions,
    lexical_terms,
    score_candidates,
    select_entries,
)
from sharedctx_server.model import EntryMeta, Kind, Stamp, StoredEntry
from sharedctx_server.state.nsstate import EPOCH_MS, NamespaceState
from sharedctx_server.tokens import TokenCounter

from .quality import evidence_of, turn_items


def build(samples: list[dict[str, Any]], embedder: Embedder, tokens: TokenCounter) -> list[Any]:
    """Per conversation: its state, and its questions with query vectors and evidence."""
    out = []
    for sample in samples:
        items = turn_items(sample)
        vectors = embedder.embed([i.content for i in items])
        state = NamespaceState(embedder.dim)
        for seq, (item, vector) in enumerate(zip(items, vectors, strict=True), start=1):
            n = tokens.count(item.content)
            ms = int(item.event_time.timestamp() * 1000)  # type: ignore[union-attr]
            entry = StoredEntry(
                key=item.key,
                stamp=Stamp(1, ms, ms, 0, ms, seq),
                meta=EntryMeta(
                    kind=Kind.MESSAGE,
                    role=item.role,
                    original_tokens=n,
                    compressed_tokens=n,
                    content_hash=content_hash(item.content),
                ),
            )
            state.put(entry, item.content, vector)
        keys = {i.key for i in items}
        questions = []
        for q in sample["qa"]:
            if q.get("category") == 5:
                continue
            evidence, _ = evidence_of(q, keys)
            if evidence:
                questions.append((q["question"], evidence))
        qvecs = embedder.embed([q for q, _ in questions])
        now_ms = int(state.event_ms[: state.size].max()) + 86_400_000
        out.append((state, questions, qvecs, now_ms))
    return out


def recall(
    data: list[Any], weights: dict[str, float], budgets: list[int], **scoring: Any
) -> dict[int, float]:
    """Mean evidence recall per budget for one parameter set."""
    vector = np.array([weights.get(f, 0.0) for f in FACTORS])
    vector = vector / vector.sum()
    options = ScoringOptions(weights=tuple(vector.tolist()), **scoring)
    sums = dict.fromkeys(budgets, 0.0)
    count = 0
    for state, questions, qvecs, now_ms in data:
        cands = state.candidates()
        n = state.size
        for (question, evidence), qvec in zip(questions, qvecs, strict=True):
            lexical = state.terms.bm25_scores(lexical_terms(question), size=n)
            scored = score_candidates(
                cands, now=(now_ms - EPOCH_MS) / 1000, query_embedding=qvec, lexical=lexical,
                options=options,
            )  # fmt: skip
            for budget in budgets:
                sel = select_entries(
                    scored.scores, cands.timestamps, cands.original_tokens,
                    cands.compressed_tokens, SelectionOptions(budget_tokens=budget),
                    order=state.sequence[:n],
                )  # fmt: skip
                keys = {state.info[i].key for i in sel.indices.tolist()}
                sums[budget] += len(evidence & keys) / len(evidence)
            count += 1
    return {b: round(sums[b] / count, 4) for b in budgets}


def main() -> None:
    """Grid over the fusion parameters; prints one line per parameter set."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--budgets", default="500,1000,2000,4000")
    args = parser.parse_args()
    samples = json.loads(Path(args.dataset).read_text())
    budgets = [int(b) for b in args.budgets.split(",")]
    embedder = Embedder.load(ModelSpec(), Path(tempfile.mkdtemp()))
    data = build(samples, embedder, TokenCounter())
    base = {"recency": 0.10, "semantic_similarity": 0.35, "toin_importance": 0.07,
            "error_indicator": 0.06, "forward_reference": 0.03, "token_density": 0.01,
            "lexical_relevance": 0.38}  # fmt: skip
    grid = itertools.product(
        [0.30, 0.40, 0.50],  # semantic
        [0.38],  # lexical
        [5.0, 20.0, 60.0],  # rank constant
        [0.5, 0.8],  # neighbour share
        [16, 64],  # neighbour sources
    )
    for semantic, lexical, k, share, sources in grid:
        weights = replace_weights(base, semantic_similarity=semantic, lexical_relevance=lexical)
        result = recall(
            data, weights, budgets, rank_constant=k, neighbour_share=share,
            neighbour_sources=sources,
        )  # fmt: skip
        print(json.dumps({"semantic": semantic, "lexical": lexical, "k": k, "share": share,
                          "sources": sources, "recall": result}), flush=True)  # fmt: skip


def replace_weights(base: dict[str, float], **changes: float) -> dict[str, float]:
    """A copy of `base` with `changes` applied."""
    merged = dict(base)
    merged.update(changes)
    return merged


__all__ = ["build", "recall", "replace"]

if __name__ == "__main__":
    main()
