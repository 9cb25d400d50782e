"""Folder lines nested under the long path they share (compress/path_tree.py)."""

from __future__ import annotations

from sharedctx_server.compress.path_tree import FolderLine, nest_paths

_DEEP = "platform/gsutil/third_party/"


def _lines(*paths: str) -> list[FolderLine]:
    return [FolderLine(p, f" ({i} entries)") for i, p in enumerate(paths)]


def test_a_run_sharing_a_long_path_is_written_under_it_once() -> None:
    lines = _lines(*(f"{_DEEP}pkg_{i}/" for i in range(4)), "other/")
    out, nested = nest_paths(lines)
    assert out == [
        _DEEP,
        "  pkg_0/ (0 entries)",
        "  pkg_1/ (1 entries)",
        "  pkg_2/ (2 entries)",
        "  pkg_3/ (3 entries)",
        "other/ (4 entries)",
    ]
    assert nested == 4


def test_the_folder_the_path_names_heads_its_group() -> None:
    # du's order: contents first, the folder last.
    lines = _lines(*(f"{_DEEP}pkg_{i}/" for i in range(4)), _DEEP)
    out, _ = nest_paths(lines)
    assert out[0] == f"{_DEEP} (4 entries)"
    assert out[1:] == [f"  pkg_{i}/ ({i} entries)" for i in range(4)]


def test_groups_nest_and_kept_lines_stay_as_they_were() -> None:
    outer = f"{_DEEP}charset_normalizer/"
    inner = f"{outer}charset_normalizer/"
    names = ("cli", "assets", "tests", "docs", "bin")
    lines = [
        FolderLine(outer, " (a)"),
        *(FolderLine(f"{inner}{name}/", f" ({name})") for name in names),
        FolderLine(inner, " (b)", ("du: cannot read directory 'x': Permission denied",)),
        FolderLine(f"{_DEEP}mock/", " (c)"),
    ]
    out, nested = nest_paths(lines)
    # The deepest path that saves most heads the group; `mock/` shares less and stays whole.
    assert out == [
        f"{outer} (a)",
        "  charset_normalizer/ (b)",
        "du: cannot read directory 'x': Permission denied",
        *(f"    {name}/ ({name})" for name in names),
        f"{_DEEP}mock/ (c)",
    ]
    assert nested == 6 + 5


def test_short_or_lone_paths_and_braced_siblings_stay_whole() -> None:
    short = _lines("lib/a/", "lib/b/", "lib/c/")
    assert nest_paths(short) == ([f"{line.path}{line.rest}" for line in short], 0)
    lone = _lines(f"{_DEEP}pkg/", "elsewhere/")
    assert nest_paths(lone)[1] == 0
    # A shared line of siblings is nested by the path before its braces, never inside them.
    braced = _lines(*(f"{_DEEP}{{a_{i},b_{i}}}/" for i in range(4)))
    out, _ = nest_paths(braced)
    assert out[0] == _DEEP and out[1] == "  {a_0,b_0}/ (0 entries)"
