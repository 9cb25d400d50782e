"""The running fill of a selection: how the budget is spent, entry by entry, in the form the
request allows (docs/fit.md, "Selection"), and how an excerpt grows or becomes its whole entry
(docs/excerpts.md)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from sharedctx_server.fit.adaptive_sizer import SizerProfile
from sharedctx_server.fit.excerpts import Excerpt, ExcerptOffer
from sharedctx_server.fit.relevance import KEEP_RECENT
from sharedctx_server.fit.result import Fill, Form

__all__ = ["Budget", "SelectionOptions", "auto_form", "compressed_forms", "smallest_cost"]

IntArray = npt.NDArray[np.int64]


@dataclass(frozen=True)
class SelectionOptions:
    """The request fields that shape selection (docs/fit.md); defaults as docs/fit.md gives."""

    budget_tokens: int
    keep_recent: int = KEEP_RECENT
    fill: Fill = Fill.SKIP
    max_entries: int | None = None
    adaptive: SizerProfile | None = None
    form: Form = Form.COMPRESSED
    compress_threshold: int | None = None  # AUTO: None means budget_tokens
    min_score: float = 0.0

    def __post_init__(self) -> None:
        # Invariants for callers of the Python API: the server's edge (edge/requests/)
        # refuses a request breaking any of them, naming its field, before it gets here.
        if self.budget_tokens <= 0:
            raise ValueError(f"budget_tokens must be > 0, got {self.budget_tokens}")
        if self.keep_recent < 0:
            raise ValueError(f"keep_recent must be >= 0, got {self.keep_recent}")
        if self.max_entries is not None and self.max_entries < 0:
            raise ValueError(f"max_entries must be >= 0 or None, got {self.max_entries}")
        if self.compress_threshold is not None and self.compress_threshold < 0:
            raise ValueError(f"compress_threshold must be >= 0, got {self.compress_threshold}")
        if np.isnan(self.min_score):
            raise ValueError("min_score must be a number, got NaN")

    @property
    def threshold(self) -> int:
        """The AUTO form's running-total threshold."""
        return self.budget_tokens if self.compress_threshold is None else self.compress_threshold


class Budget:
    """The running fill: the entries taken in fill order, the form and cost of each, the
    excerpts being built, and what is left."""

    def __init__(self, opts: SelectionOptions, offer: ExcerptOffer | None = None) -> None:
        self.left = opts.budget_tokens
        self.used = 0
        self.form = opts.form
        self.threshold = opts.threshold
        self.cap = opts.max_entries
        self.offer = offer
        self.taken: list[int] = []
        self.forms: dict[int, Form] = {}
        self.costs: dict[int, int] = {}
        self.excerpts: dict[int, Excerpt] = {}
        self.capped: list[int] = []  # rows refused because max_entries were taken

    @property
    def full(self) -> bool:
        return self.cap is not None and len(self.taken) >= self.cap

    def _set(self, index: int, form: Form, cost: int) -> None:
        if index not in self.forms:
            self.taken.append(index)
        delta = cost - self.costs.get(index, 0)
        self.forms[index], self.costs[index] = form, cost
        self.used += delta
        self.left -= delta

    def take(self, index: int, full_cost: int, compressed_cost: int, reserve: int = 0) -> bool:
        """Add the candidate whole in the form the request allows, if it fits. False only when
        nothing was done that the walk should know about (it does not fit, and it has no
        excerpt items to come: FILL STOP stops there).

        `reserve`: tokens AUTO must leave for entries promised a place after this one (the
        rest of keep_recent), so that choosing a full form never squeezes them out.
        """
        if index in self.excerpts:
            self.upgrade(index, full_cost)
            return True
        if self.full:
            self.capped.append(index)
            return False
        if self.form is Form.FULL:
            choice = (Form.FULL, full_cost) if full_cost <= self.left else None
        elif self.form is Form.COMPRESSED:
            choice = compressed_form(full_cost, compressed_cost)
            choice = choice if choice[1] <= self.left else None
        else:
            choice = self._auto(full_cost, compressed_cost, reserve)
        if choice is None:
            return self.offer is not None and bool(self.offer.has_hits[index])
        self._set(index, *choice)
        return True

    def upgrade(self, row: int, full_cost: int) -> bool:
        """Turn `row`'s excerpt into the whole entry in its full form, if the request allows
        full forms and it fits in place of the excerpt."""
        excerpt = self.excerpts[row]
        if self.form is Form.COMPRESSED:
            return False
        extra = full_cost - excerpt.tokens
        if extra > self.left or (self.form is Form.AUTO and self.used + extra > self.threshold):
            return False
        del self.excerpts[row]
        self._set(row, Form.FULL, full_cost)
        return True

    def extend(self, row: int, picks: list[int]) -> bool:
        """Add segments `picks` to `row`'s excerpt (starting one), if they fit."""
        if row in self.forms and row not in self.excerpts:
            return True  # in whole already: the segments are in it
        assert self.offer is not None
        excerpt = self.excerpts.get(row)
        if excerpt is None:
            if self.full:
                self.capped.append(row)
                return False
            excerpt = self.offer.excerpt(row)
        cost = excerpt.cost_with(picks)
        if cost - excerpt.tokens > self.left:
            return False
        excerpt.add(picks, cost)
        self.excerpts[row] = excerpt
        self._set(row, Form.EXCERPT, cost)
        return True

    def _auto(self, full_cost: int, compressed_cost: int, reserve: int) -> tuple[Form, int] | None:
        form, cost = auto_form(
            self.used, full_cost, compressed_cost, self.threshold, self.left - reserve
        )
        return (form, cost) if cost <= self.left else None


def auto_form(
    used: int, full_cost: int, compressed_cost: int, threshold: int, room: int
) -> tuple[Form, int]:
    """The AUTO form of the next entry and its cost, for every strategy.

    Full while the running total (`used` before it) stays within `threshold` and the full
    form fits in `room`; after that the smaller form, compressed on a tie (fit.md: compressed
    after the threshold). A caller-supplied compressed form can be the larger one, and then
    the full form is returned, which costs less.
    """
    if used + full_cost <= threshold and full_cost <= room:
        return Form.FULL, full_cost
    if compressed_cost <= full_cost:
        return Form.COMPRESSED, compressed_cost
    return Form.FULL, full_cost


def compressed_form(full_cost: int, compressed_cost: int) -> tuple[Form, int]:
    """The form COMPRESSED returns and its cost: the compressed one, unless a caller-supplied
    compressed form is the larger (then the full form, which holds more for less)."""
    if full_cost < compressed_cost:
        return Form.FULL, full_cost
    return Form.COMPRESSED, compressed_cost


def compressed_forms(full: IntArray, comp: IntArray) -> npt.NDArray[np.int8]:
    """compressed_form's choice for many entries at once, as Form values."""
    return np.where(full < comp, int(Form.FULL), int(Form.COMPRESSED)).astype(np.int8)


def smallest_cost(form: Form, full: IntArray, comp: IntArray) -> IntArray:
    """The cost each entry can enter at: for FULL the full form, else the cheaper of the two
    (AUTO: as an entry is counted before its form is settled; COMPRESSED: compressed_form)."""
    if form is Form.FULL:
        return full
    return np.minimum(full, comp)
