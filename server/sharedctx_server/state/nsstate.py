"""One namespace's entries as the arrays Fit scores, updated entry by entry (no I/O here).

Rows are slots: an entry keeps its slot while it lives, a freed slot is reused. Columns grow
by doubling. Everything Fit needs per query is either a column here or derived from the
columns once per change (neighbours, reference counts), never per entry per query.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ..compress import REWRITING
from ..fit.bm25 import TermStats
from ..fit.factors import token_density_scores
from ..fit.lexical import lexical_terms, lexical_terms_each
from ..fit.neighbours import Neighbours, thread_neighbours
from ..fit.scoring import Candidates
from ..fit.segment_index import SegmentIndex
from ..fit.segments import Segments, has_long_line, line_head
from ..model import Kind, StoredEntry
from ..segment import excerpt_lines
from ..segment.clock_marks import clock_terms
from ..segment.date_order import newest_first
from ..segment.json_lines import statement_terms
from ..segment.marks import mark_terms
from .clocks import EntryClocks
from .entry_text import echoed_command, name_terms, shell_commands, turn_role
from .turn_cache import TurnCache

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Fit's relevance strategies see message entries whole, tool outputs by their first 200
# characters (arg_text); keeping a bounded prefix keeps memory proportional to entry count.
_RELEVANCE_TEXT_CHARS = 4000
# The edit journal keeps at least half of this many edits (a caller further behind rebuilds).
_EDITS_KEPT = 4096

# Timestamps are seconds since this epoch (2020-01-01): small numbers keep float64 exact to
# well under a millisecond.
EPOCH_MS = 1_577_836_800_000


@dataclass
class SlotInfo:
    """The per-entry values that are not numeric columns."""

    key: str
    role: str
    agent_id: str
    tool_name: str
    thread: str
    tags: frozenset[str]
    content_hash: str
    aliases: tuple[str, ...]
    references: tuple[str, ...]
    relevance_text: str


@dataclass(frozen=True)
class _Derived:
    """What scoring reads that follows from the stored columns alone."""

    timestamps: FloatArray
    neighbours: Neighbours
    density: FloatArray


class NamespaceState:
    """Columns for one namespace; the owner serialises every call."""

    alive: BoolArray
    event_ms: IntArray
    sequence: IntArray
    expires_ms: IntArray
    original_tokens: IntArray
    compressed_tokens: IntArray
    importance: FloatArray
    error_score: FloatArray
    markers: FloatArray
    reference_counts: FloatArray
    kind: npt.NDArray[np.int8]
    thread_id: IntArray
    # Tool outputs that may be runs of one command (fit.excerpt_items.series_tails): one id
    # per tool, thread and echoed command (0: not a tool output); whether the command is
    # echoed (else runs are told by how they open).
    command: IntArray
    echoed: BoolArray
    # Whose compressed form shows every line in fewer words (compress.REWRITING).
    rewritten: BoolArray
    entry_version: IntArray
    embedded: BoolArray
    embeddings: npt.NDArray[np.float32]

    def __init__(self, dim: int, capacity: int = 64) -> None:
        self.dim = dim
        self.last_id = "0"  # change-log position this state reflects
        self.ns_version = 0
        self._cap = 0
        self._n = 0  # one past the highest slot in use
        self._free: list[int] = []
        self.slot_of: dict[str, int] = {}
        self.info: list[SlotInfo | None] = []
        self.terms = TermStats()
        # Cut entries (see sharedctx_server.segment): their segments and the segments' BM25.
        self.segments = SegmentIndex()
        # Per cut entry stamped with times of day: its last minute, its stamped segments.
        self.clocks = EntryClocks()
        self._threads: dict[str, int] = {}
        self._commands: dict[tuple[str, int, str | None], int] = {}
        self._inbound: Counter[str] = Counter()  # name -> live entries referencing it
        self._name_slot: dict[str, int] = {}  # key or alias -> slot
        self._cached: _Derived | None = None
        # The turn strategies' turns of this state (its lifetime: a Clear starts afresh).
        self.turns = TurnCache()
        self._edits: list[int] = []
        self._edits_base = 0
        self._grow(capacity)

    # --- columns -------------------------------------------------------------------------

    def _grow(self, capacity: int) -> None:
        def grown(old: npt.NDArray[Any] | None, dtype: Any, width: int = 0) -> npt.NDArray[Any]:
            shape = (capacity, width) if width else (capacity,)
            new: npt.NDArray[Any] = np.zeros(shape, dtype=dtype)
            if old is not None:
                new[: old.shape[0]] = old
            return new

        first = self._cap == 0
        self.alive = grown(None if first else self.alive, np.bool_)
        self.event_ms = grown(None if first else self.event_ms, np.int64)
        self.sequence = grown(None if first else self.sequence, np.int64)
        self.expires_ms = grown(None if first else self.expires_ms, np.int64)
        self.original_tokens = grown(None if first else self.original_tokens, np.int64)
        self.compressed_tokens = grown(None if first else self.compressed_tokens, np.int64)
        self.importance = grown(None if first else self.importance, np.float64)
        self.error_score = grown(None if first else self.error_score, np.float64)
        self.markers = grown(None if first else self.markers, np.float64)
        self.reference_counts = grown(None if first else self.reference_counts, np.float64)
        self.kind = grown(None if first else self.kind, np.int8)
        self.thread_id = grown(None if first else self.thread_id, np.int64)
        self.command = grown(None if first else self.command, np.int64)
        self.echoed = grown(None if first else self.echoed, np.bool_)
        self.rewritten = grown(None if first else self.rewritten, np.bool_)
        self.entry_version = grown(None if first else self.entry_version, np.int64)
        self.embedded = grown(None if first else self.embedded, np.bool_)
        self.embeddings = grown(None if first else self.embeddings, np.float32, self.dim)
        self.info.extend([None] * (capacity - self._cap))
        self._cap = capacity

    @property
    def size(self) -> int:
        """Rows in use (live or freed); the length of the arrays Fit sees."""
        return self._n

    @property
    def live(self) -> int:
        """Live entries."""
        return len(self.slot_of)

    # --- updates -------------------------------------------------------------------------

    def reset(self) -> None:
        """Forget every entry (a Clear), keeping the change-log position."""
        last_id, version = self.last_id, self.ns_version
        self.__init__(self.dim)  # type: ignore[misc]
        self.last_id, self.ns_version = last_id, version

    def put(
        self, entry: StoredEntry, full_text: str, vector: npt.NDArray[np.float32] | None
    ) -> None:
        """Insert or replace `entry` (read with its full form)."""
        slot = self.slot_of.get(entry.key)
        if slot is not None:
            self._unlink(slot)
        else:
            slot = self._free.pop() if self._free else self._take_new()
            self.slot_of[entry.key] = slot
        meta, stamp = entry.meta, entry.stamp
        self.alive[slot] = True
        self.event_ms[slot] = stamp.event_ms
        self.sequence[slot] = stamp.sequence
        self.expires_ms[slot] = stamp.expires_ms
        self.original_tokens[slot] = meta.original_tokens
        self.compressed_tokens[slot] = meta.compressed_tokens
        self.importance[slot] = meta.importance
        self.error_score[slot] = meta.error_score
        self.markers[slot] = meta.ref_markers
        self.kind[slot] = int(meta.kind)
        self.thread_id[slot] = self._threads.setdefault(meta.thread, len(self._threads))
        echo = None
        if meta.kind == Kind.TOOL_OUTPUT and meta.tool_name:
            echo = echoed_command(full_text)
            run = (meta.tool_name, int(self.thread_id[slot]), echo)
            self.command[slot] = self._commands.setdefault(run, len(self._commands) + 1)
        else:
            self.command[slot] = 0
        self.echoed[slot] = echo is not None
        self.rewritten[slot] = meta.compressor in REWRITING
        self.entry_version[slot] = stamp.version
        self.set_vector(slot, vector)
        self.info[slot] = SlotInfo(
            key=entry.key,
            role=turn_role(meta.kind, meta.role, meta.tool_name),
            agent_id=meta.agent_id,
            tool_name=meta.tool_name,
            thread=meta.thread,
            tags=frozenset(meta.tags),
            content_hash=meta.content_hash,
            aliases=meta.aliases,
            references=meta.references,
            relevance_text=full_text[:_RELEVANCE_TEXT_CHARS],
        )
        self._index_text(
            slot,
            full_text,
            meta.segments,
            name_terms(entry.key, meta),
            listing=meta.compressor == "listing",
        )
        self._link(slot)
        self._changed(slot)

    def _index_text(
        self, slot: int, text: str, packed: bytes, names: list[str], listing: bool
    ) -> None:
        """BM25 terms of the entry and, for a cut entry, of each segment (the entry's terms
        are its segments' together: the text is tokenised once). `names` (name_terms) count
        once in the entry and once in every segment: a line of `Linux/lines-0001-0500` is a
        Linux line, though the word is not on it. `listing`: the text was compressed as a
        directory listing (segment.extremes reads its sizes)."""
        segments = Segments.unpack(packed) if packed else None
        lines = excerpt_lines(text) if segments is not None else []
        if segments is None or segments.total_lines != len(lines):
            # Not cut, or cut by rules that no longer match the text: whole entry only.
            self.segments.remove(slot)
            self.clocks.forget(slot)
            self.terms.add(slot, lexical_terms(text) + names)
            return
        starts = segments.starts.tolist()
        commands = shell_commands(lines, starts)
        if commands.names:
            names = list(dict.fromkeys([*names, *commands.names]))
            lines = ["", *lines[1:]]
        shapes = statement_terms(lines, starts, segments.lines.tolist())
        # A segment matches by what an excerpt of it shows: a long line by its head (a line
        # of 20,000 characters holds some word of almost any query, and showing its head
        # would not show that word). The entry matches by all of its text.
        tails: list[str] = []
        if has_long_line(lines):
            heads = [line_head(line) for line in lines]
            tails = [line[len(head) :] for line, head in zip(lines, heads, strict=True)]
            lines = heads
        per_segment = lexical_terms_each(
            [
                "\n".join(lines[start : start + count])
                for start, count in zip(
                    segments.starts.tolist(), segments.lines.tolist(), strict=True
                )
            ]
        )
        # The rows holding a table column's largest or smallest value answer "which ... the
        # most ...?" with no word of the question on them (fit.superlatives).
        # A record's minute answers "what happened at 10:05?", whose numbers every line holds
        # somewhere (fit.clock). The line that defines a name answers "what does parse_args
        # do?" before the longer lines that call it (fit.definitions), the row a table names
        # `openssl` "which version of openssl?" before those that mention it (fit.row_names).
        # A session's `$ uname -a` says what its output is about: the kernel (segment.commands).
        minutes = clock_terms(lines, starts)
        self.clocks.set(slot, minutes, len(starts), newest_first(lines, starts))
        kinds = mark_terms(lines, starts, listing, segments.heads.tolist())
        for found in (*kinds, minutes, commands.per_segment):
            for k, marks in found.items():
                per_segment[k] = per_segment[k] + marks
        self.segments.add(slot, segments, per_segment, names, shapes)
        rest = lexical_terms("\n".join(tail for tail in tails if tail)) if tails else []
        self.terms.add(slot, [term for terms in per_segment for term in terms] + rest + names)

    def set_vector(self, slot: int, vector: npt.NDArray[np.float32] | None) -> None:
        """Set (or clear) a slot's embedding."""
        if vector is None:
            self.embedded[slot] = False
            self.embeddings[slot] = 0.0
        else:
            self.embedded[slot] = True
            self.embeddings[slot] = vector

    def renew(self, key: str, expires_ms: int) -> bool:
        """Move `key`'s expiry (a Touch); False when the key is not here. Nothing derived
        depends on expiry (live_mask reads it per Fit), so nothing else changes."""
        slot = self.slot_of.get(key)
        if slot is None:
            return False
        self.expires_ms[slot] = expires_ms
        return True

    def remove(self, key: str) -> None:
        """Drop `key` if present."""
        slot = self.slot_of.pop(key, None)
        if slot is None:
            return
        self._unlink(slot)
        self.alive[slot] = False
        self.embedded[slot] = False
        self.info[slot] = None
        self.terms.remove(slot)
        self.segments.remove(slot)
        self.clocks.forget(slot)
        self._free.append(slot)
        self._changed(slot)

    def _take_new(self) -> int:
        if self._n == self._cap:
            self._grow(self._cap * 2)
        self._n += 1
        return self._n - 1

    # --- references: own {{ref}} markers plus {{<key>}} mentions from other entries -------

    def _names(self, slot: int) -> list[str]:
        info = self.info[slot]
        assert info is not None
        return [info.key, *info.aliases]

    def _link(self, slot: int) -> None:
        info = self.info[slot]
        assert info is not None
        for name in self._names(slot):
            self._name_slot[name] = slot
        self.reference_counts[slot] = self.markers[slot] + sum(
            self._inbound[n] for n in self._names(slot)
        )
        for ref in info.references:
            self._inbound[ref] += 1
            target = self._name_slot.get(ref)
            if target is not None:
                self.reference_counts[target] += 1

    def _unlink(self, slot: int) -> None:
        info = self.info[slot]
        if info is None:
            return
        for ref in info.references:
            self._inbound[ref] -= 1
            if self._inbound[ref] <= 0:
                del self._inbound[ref]
            target = self._name_slot.get(ref)
            if target is not None:
                self.reference_counts[target] -= 1
        for name in self._names(slot):
            if self._name_slot.get(name) == slot:
                del self._name_slot[name]

    # --- what Fit reads ------------------------------------------------------------------

    def slots_named(self, names: list[str]) -> list[int]:
        """Slots whose key or alias is in `names`."""
        return [s for s in (self._name_slot.get(n) for n in names) if s is not None]

    def _changed(self, slot: int) -> None:
        # An entry came or went: whatever was derived from the entries is stale, and the
        # journal tells callers that keep their own derived structures what changed.
        self._cached = None
        self._edits.append(slot)
        if len(self._edits) > _EDITS_KEPT:
            drop = len(self._edits) - _EDITS_KEPT // 2
            del self._edits[:drop]
            self._edits_base += drop

    @property
    def edit_mark(self) -> int:
        """A position in this state's edits, for edits_since."""
        return self._edits_base + len(self._edits)

    def edits_since(self, mark: int) -> list[int] | None:
        """The slots put or removed after `mark`, oldest first (a slot once per edit). None
        when they are no longer all known (the journal keeps the latest _EDITS_KEPT)."""
        if mark < self._edits_base or mark > self.edit_mark:
            return None
        return self._edits[mark - self._edits_base :]

    def _derived(self) -> _Derived:
        # Columns that only change when entries do: computed once per change, not per Fit.
        if self._cached is None:
            n = self._n
            timestamps = (self.event_ms[:n] - EPOCH_MS) / 1000.0
            threads = np.where(self.alive[:n], self.thread_id[:n], -1)
            density = token_density_scores(self.original_tokens[:n], self.compressed_tokens[:n])
            # Shared by every Fit until the next change: nobody may write to them.
            timestamps.flags.writeable = False
            density.flags.writeable = False
            self._cached = _Derived(
                timestamps=timestamps,
                neighbours=thread_neighbours(threads, timestamps, self.sequence[:n]),
                density=density,
            )
        return self._cached

    def candidates(self) -> Candidates:
        """The scoring arrays (views; valid until the next update)."""
        n = self._n
        derived = self._derived()
        return Candidates(
            timestamps=derived.timestamps,
            original_tokens=self.original_tokens[:n],
            compressed_tokens=self.compressed_tokens[:n],
            importance=self.importance[:n],
            error_score=self.error_score[:n],
            reference_counts=self.reference_counts[:n],
            embeddings=self.embeddings[:n],
            embedded=self.embedded[:n],
            thread_ids=self.thread_id[:n],
            neighbours=derived.neighbours,
            density=derived.density,
        )

    def live_mask(self, now_ms: int) -> BoolArray:
        """Rows holding an entry that has not expired at `now_ms` (Redis's clock)."""
        n = self._n
        expires = self.expires_ms[:n]
        mask: BoolArray = self.alive[:n] & ((expires == 0) | (expires >= now_ms))
        return mask

    def missing_vectors(
        self, shared: Mapping[str, npt.NDArray[np.float32]] | None = None
    ) -> list[tuple[str, str]]:
        """(key, content hash) of live entries without an embedding, after giving each the
        vector of its text where `shared` (content hash -> vector) has one: entries with equal
        texts share one stored vector, and the change-log record of its computation names
        only one of them."""
        rows = np.flatnonzero(self.alive[: self._n] & ~self.embedded[: self._n])
        out = []
        for slot in rows.tolist():
            info = self.info[slot]
            if info is None:
                continue
            vector = shared.get(info.content_hash) if shared else None
            if vector is not None:
                self.set_vector(slot, vector)
            else:
                out.append((info.key, info.content_hash))
        return out
