"""NamespaceState's edit journal, which lets Fit extend its turn indexes instead of rebuilding."""

from __future__ import annotations

import numpy as np
from sharedctx_server.fit import lexical_terms
from sharedctx_server.model import EntryMeta, Stamp, StoredEntry
from sharedctx_server.segment.commands import command_words
from sharedctx_server.state import nsstate
from sharedctx_server.state.entry_text import echoed_command, name_terms, shell_commands
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


def test_a_program_says_what_it_reports_in_its_subjects_words() -> None:
    assert "kernel" in command_words("uname -a")
    assert "disk" in command_words("sudo df -h /") == command_words("df")
    assert "memory" in command_words("/usr/bin/free -m")
    assert "commit" in command_words("git log --oneline -n 5")
    assert "branch" in command_words("git status")
    assert command_words("LANG=C id") == command_words("id") != ""
    assert command_words("make test") == command_words("") == ""
    # A tool named for a program names what it reports too.
    assert "disk" in name_terms("tool/out", EntryMeta(tool_name="df"))


def test_a_diff_names_its_changed_files_whatever_tool_wrote_it() -> None:
    """A diff stored by a tool named `git` (no subcommand) or by none: "which file did the
    fix change?" holds no word of `diff --git a/x.py b/x.py`."""
    for tool in ("git", ""):
        terms = set(name_terms("tool/out", EntryMeta(tool_name=tool, compressor="diff")))
        assert {"fil", "chang"} <= terms, tool  # `file`, `change` as terms
    assert "fil" not in name_terms("tool/out", EntryMeta(compressor="log"))


def test_an_entrys_author_names_it_and_its_tags_and_thread_do_not() -> None:
    meta = EntryMeta(role="user", agent_id="tester-2", tags=("session-3",), thread="checkout")
    terms = name_terms("msg/7", meta)
    assert {"user", "tester"} <= set(terms)
    assert not {"session", "checkout"} & set(terms)


def test_one_echoed_command_names_its_output_and_a_sessions_commands_their_blocks() -> None:
    one = ["$ df -h /", "Filesystem Size Used Avail Use% Mounted on", "/dev/vda 252G 31G 72G 31% /"]
    found = shell_commands(one, [0, 1, 2])
    assert set(lexical_terms("df h disk space")) <= set(found.names) and not found.per_segment
    session = ["$ uname -a", "Linux box 6.1.0 x86_64", "$ make test", "ok", "$ id", "uid=0(root)"]
    found = shell_commands(session, [0, 1, 2, 3, 4, 5])
    assert not found.names
    assert set(found.per_segment) == {0, 4}  # `make` reports nothing written down
    assert "kernel" in found.per_segment[0] and "user" in found.per_segment[4]
    assert shell_commands(["plain", "text"], [0, 1]) == shell_commands([], [])
