"""NamespaceState's edit journal, which lets Fit extend its turn indexes instead of rebuilding."""

from __future__ import annotations

import numpy as np
from sharedctx_server.model import EntryMeta, Stamp, StoredEntry
from sharedctx_server.state import nsstate
from sharedctx_server.state.entry_text import echoed_command
from sharedctx_server.state.nsstate import NamespaceState


def entry(key: str, seq: int) -> StoredEntry:
    return StoredEntry(key=key, stamp=Stamp(1, seq, seq, 0, seq, seq), meta=EntryMeta())


def test_the_journal_names_every_slot_put_or_removed() -> None:
    state = NamespaceState(dim=4)
    mark = state.edit_mark
    state.put(entry("a", 1), "alpha", None)
    state.put(entry("b", 2), "beta", np.ones(4, dtype=np.float32))
    assert state.edits_since(mark) == [0, 1]
    mark = state.edit_mark
    state.put(entry("a", 3), "alpha again", None)  # an overwrite
    state.remove("b")
    assert state.edits_since(mark) == [0, 1]
    assert state.edits_since(state.edit_mark) == []


def test_a_mark_older_than_the_journal_keeps_is_unknown() -> None:
    state = NamespaceState(dim=4)
    mark = state.edit_mark
    for i in range(nsstate._EDITS_KEPT + 1):
        state.put(entry(f"k{i}", i + 1), "text", None)
    assert state.edits_since(mark) is None
    recent = state.edit_mark - 1
    assert state.edits_since(recent) == [nsstate._EDITS_KEPT]


def test_the_command_an_output_echoes_is_read_without_its_prompt() -> None:
    assert echoed_command("$ make  test\nok\n") == "make test"
    assert echoed_command("dev@box:~/app$ python -m pytest -q\n...") == "python -m pytest -q"
    assert echoed_command("make test\n$ not first") is None
    assert echoed_command("") is None
