"""A Fit request in, a FitQuery out (docs/fit.md): budget within the server's limit, known
enums, weights and numbers that mean something.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
from sharedctx.v1 import sharedctx_pb2 as pb

from ...errors import InvalidArgument, LimitExceeded
from ...fit import (
    FACTORS,
    Fill,
    Form,
    ScoringOptions,
    SelectionOptions,
    SizerProfile,
    Strategy,
    resolve_weights,
    sizer_profile,
)
from ...fit.weights import WEIGHT_PRESETS
from ...model import Kind
from ...services.fit_model import Filters, FitQuery
from ...settings import Settings
from .fields import content_size, kind, namespace, set_by

T = TypeVar("T")
# Each request enum's values, UNSPECIFIED mapped to the default the proto documents.
_STRATEGIES: Mapping[int, Strategy] = {
    pb.STRATEGY_UNSPECIFIED: Strategy.SCORED,
    pb.STRATEGY_SCORED: Strategy.SCORED,
    pb.STRATEGY_RELEVANT: Strategy.RELEVANT,
    pb.STRATEGY_RECENT: Strategy.RECENT,
}
# FORM_EXCERPT is absent on purpose: it is a reply form (fit() says so before looking here).
_FORMS: Mapping[int, Form] = {
    pb.FORM_UNSPECIFIED: Form.COMPRESSED,
    pb.FORM_COMPRESSED: Form.COMPRESSED,
    pb.FORM_FULL: Form.FULL,
    pb.FORM_AUTO: Form.AUTO,
}
_FILLS: Mapping[int, Fill] = {
    pb.FILL_UNSPECIFIED: Fill.SKIP,
    pb.FILL_SKIP: Fill.SKIP,
    pb.FILL_STOP: Fill.STOP,
}
_ADAPTIVE: Mapping[int, str | None] = {
    pb.ADAPTIVE_UNSPECIFIED: None,
    pb.ADAPTIVE_NONE: None,
    pb.ADAPTIVE_CONSERVATIVE: "conservative",
    pb.ADAPTIVE_MODERATE: "moderate",
    pb.ADAPTIVE_AGGRESSIVE: "aggressive",
}
# Fit's optional counts, each >= 0, with what the rule means for it.
_FIT_COUNTS = {
    "keep_recent": "must be >= 0 (0 = none); got {}",
    "max_entries": "must be >= 0 (or absent for no cap); got {}",
    "compress_threshold": "must be >= 0; got {}",
}


def _enum(value: int, table: Mapping[int, T], name: str) -> T:
    if value not in table:
        raise InvalidArgument(name, f"unknown value {value}")
    return table[value]


def _present(msg: Any, names: Sequence[str]) -> dict[str, Any]:
    """The optional fields the caller set, by name. Absent ones are left out so that the
    options' own defaults apply: they are defined once, in the fit package."""
    return {name: getattr(msg, name) for name in names if msg.HasField(name)}


def fit(req: pb.FitRequest, settings: Settings) -> FitQuery:
    """A Fit request (docs/fit.md): budget within the server's limit, known enums, weights
    and numbers that mean something."""
    limits = settings.limits
    ns = namespace(req.namespace, limits)
    if req.budget_tokens <= 0:
        raise InvalidArgument("budget_tokens", f"must be > 0; got {req.budget_tokens}")
    if req.budget_tokens > limits.max_budget_tokens:
        raise LimitExceeded(
            "max_budget_tokens",
            f"budget_tokens {req.budget_tokens} exceeds the server's limit of "
            f"{limits.max_budget_tokens}" + set_by("max_budget_tokens"),
        )
    content_size(req.query, limits, "query")
    strategy = _enum(req.strategy, _STRATEGIES, "strategy")
    if req.form == pb.FORM_EXCERPT:
        raise InvalidArgument(
            "form",
            "FORM_EXCERPT is a reply form: ask for compressed, full or auto "
            "(excerpts come back on their own unless excerpts is false)",
        )
    weights = _weights(req)
    if strategy is Strategy.SCORED and not weights.any():
        raise InvalidArgument("weights", "every weight is 0; give at least one factor a weight > 0")
    scoring = _scoring(req, weights)
    selection = _selection(req)
    return FitQuery(
        namespace=ns,
        query=req.query,
        strategy=strategy,
        weights=weights,
        scoring=scoring,
        selection=selection,
        filters=_filters(req.filters),
        include_content=req.include_content,
        explain=req.explain,
        # Absent means on (within what the server allows).
        excerpts=settings.excerpts and (not req.HasField("excerpts") or req.excerpts),
    )


def _weights(req: pb.FitRequest) -> npt.NDArray[np.float64]:
    """The preset's weights with the request's overrides, each named as `weights.<factor>`."""
    if req.preset and req.preset not in WEIGHT_PRESETS:
        known = ", ".join(WEIGHT_PRESETS)
        raise InvalidArgument("preset", f"unknown preset {req.preset!r}; known: {known}")
    overrides = _present(req.weights, FACTORS)
    for factor, weight in overrides.items():
        if not math.isfinite(weight) or weight < 0:
            raise InvalidArgument(
                f"weights.{factor}", f"must be a finite number >= 0; got {weight}"
            )
    return resolve_weights(req.preset, overrides)


def _scoring(req: pb.FitRequest, weights: npt.NDArray[np.float64]) -> ScoringOptions:
    given = _present(req, ("recency_decay_rate", "expand_neighbours"))
    decay = given.get("recency_decay_rate")
    if decay is not None and (not math.isfinite(decay) or decay < 0):
        raise InvalidArgument("recency_decay_rate", f"must be a finite number >= 0; got {decay}")
    return ScoringOptions(weights=tuple(float(w) for w in weights), **given)


def _selection(req: pb.FitRequest) -> SelectionOptions:
    given = _present(req, ("min_score", *_FIT_COUNTS))
    min_score = given.get("min_score")
    if min_score is not None and math.isnan(min_score):
        raise InvalidArgument("min_score", "must be a number")
    for name, rule in _FIT_COUNTS.items():
        count = given.get(name)
        if count is not None and count < 0:
            raise InvalidArgument(name, rule.format(count))
    return SelectionOptions(
        budget_tokens=int(req.budget_tokens),
        fill=_enum(req.fill, _FILLS, "fill"),
        adaptive=_adaptive(req.adaptive),
        form=_enum(req.form, _FORMS, "form"),
        **given,
    )


def _adaptive(value: int) -> SizerProfile | None:
    profile = _enum(value, _ADAPTIVE, "adaptive")
    return sizer_profile(profile) if profile else None


def _filters(msg: pb.Filters) -> Filters:
    return Filters(
        include_kinds=_kinds(msg.include_kinds, "filters.include_kinds"),
        exclude_kinds=_kinds(msg.exclude_kinds, "filters.exclude_kinds"),
        include_tags=frozenset(msg.include_tags),
        exclude_tags=frozenset(msg.exclude_tags),
        include_agent_ids=frozenset(msg.include_agent_ids),
        exclude_agent_ids=frozenset(msg.exclude_agent_ids),
        threads=frozenset(msg.threads),
    )


def _kinds(values: Sequence[int], field: str) -> frozenset[Kind]:
    return frozenset(kind(k, f"{field}[{i}]") for i, k in enumerate(values))
