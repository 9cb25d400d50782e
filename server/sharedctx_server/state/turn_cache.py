"""What the RELEVANT and RECENT strategies keep per namespace between Fits: each filter set's
turn index, and every row as the turn strategies see it (docs/relevance.md).

Turns depend only on the entries and on which of them are eligible, so a filter set's index
is reused while nothing changed, brought up to date after writes by regrouping the turns from
the earliest change on (for an agent's usual writes, the last one or two), and rebuilt when
that would be all of them. Dropped with the namespace state (a Clear starts afresh).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from ..fit import ConversationEntry, TurnIndex, TurnTexts, index_turns, update_turns

if TYPE_CHECKING:
    from .nsstate import NamespaceState, SlotInfo

BoolArray = npt.NDArray[np.bool_]

# Turn indexes kept per namespace, one per filter set (each holds the turns' text once more).
_KEPT_TURN_INDEXES = 2
# Stands for a freed row, which is never eligible.
_GONE = ConversationEntry("", None)


@dataclass(frozen=True)
class _Kept:
    """A turn index, the edit-journal mark it reflects and the eligibility it was built for."""

    index: TurnIndex
    mark: int
    eligible: BoolArray


class TurnCache:
    """One namespace state's turn indexes (least recently used filter sets go first) and its
    rows as ConversationEntries, each built once per write of its entry."""

    def __init__(self) -> None:
        self._kept: dict[Hashable, _Kept] = {}
        self._rows: dict[int, tuple[SlotInfo, ConversationEntry]] = {}

    def index(
        self,
        state: NamespaceState,
        eligible: BoolArray,
        filters: Hashable,
        estimate_tokens: Callable[[str], int],
    ) -> tuple[TurnIndex, str]:
        """The turns of `state`'s `eligible` rows under `filters`, and how they were had:
        "reused", "updated" or "rebuilt"."""
        kept = self._kept.pop(filters, None)
        index, outcome = None, "rebuilt"
        edits = state.edits_since(kept.mark) if kept is not None else None
        if kept is not None and edits == [] and np.array_equal(kept.eligible, eligible):
            index, outcome = kept.index, "reused"
        else:
            entries = self._entries(state)  # built once, for update or rebuild
            if kept is not None and edits is not None:
                index = update_turns(kept.index, entries, eligible, edits)
                outcome = "updated" if index is not None else outcome
            if index is None:
                index = index_turns(
                    entries,
                    eligible,
                    estimate_tokens,
                    order=_chronological(state, eligible),
                    # The tokenising of this filter set's previous index, where there was one.
                    texts=kept.index.texts if kept is not None else TurnTexts(),
                )
        self._kept[filters] = _Kept(index, state.edit_mark, eligible)
        while len(self._kept) > _KEPT_TURN_INDEXES:
            del self._kept[next(iter(self._kept))]
        return index, outcome

    def _entries(self, state: NamespaceState) -> list[ConversationEntry]:
        """Every row as the turn strategies see it."""
        out = []
        for i, info in enumerate(state.info[: state.size]):
            if info is None:
                out.append(_GONE)
                continue
            hit = self._rows.get(i)
            if hit is None or hit[0] is not info:  # a new SlotInfo is a new write of the slot
                hit = self._rows[i] = (info, _conversation_entry(state, i, info))
            out.append(hit[1])
        return out


def _chronological(state: NamespaceState, eligible: BoolArray) -> npt.NDArray[np.int64]:
    """Eligible rows by (event time, write order): the order of _conversation_entry's
    created_at strings, without sorting strings."""
    rows = np.flatnonzero(eligible)
    return rows[np.lexsort((state.sequence[rows], state.event_ms[rows]))]


def _conversation_entry(state: NamespaceState, i: int, info: SlotInfo) -> ConversationEntry:
    # Sortable and the same on every replica: event time, then write order.
    created = f"{int(state.event_ms[i]):015d}.{int(state.sequence[i]):012d}"
    if info.role:
        return ConversationEntry(created, info.role, info.relevance_text)
    return ConversationEntry(
        created, None, "", tool=info.tool_name or "output", args=info.relevance_text[:400]
    )
