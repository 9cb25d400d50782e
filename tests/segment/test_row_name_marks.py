"""Mark terms on the segments holding the rows a table names."""

from __future__ import annotations

import logging

import pytest
from sharedctx_server.compress.table_parse import find_tables
from sharedctx_server.fit.lexical import lexical_terms
from sharedctx_server.fit.row_names import name_marks
from sharedctx_server.segment import marks
from sharedctx_server.segment.listing_rows import listed_entries
from sharedctx_server.segment.marks import mark_terms
from sharedctx_server.segment.row_name_marks import item_name_terms, row_name_terms

_DPKG_ROW = "{:<3} {:<27} {:<12} {:<12} {}"
DPKG = [
    _DPKG_ROW.format("||/", "Name", "Version", "Architecture", "Description"),
    _DPKG_ROW.format("+++", "=" * 27, "=" * 12, "=" * 12, "=" * 30),
    _DPKG_ROW.format("ii", "libgnutls-openssl27:amd64", "3.7.9-2", "amd64", "OpenSSL wrapper"),
    _DPKG_ROW.format("ii", "openssl", "3.0.19-1", "amd64", "Secure Sockets Layer toolkit"),
    _DPKG_ROW.format("ii", "perl-openssl-defaults", "7+b1", "amd64", "version for Perl OpenSSL"),
    _DPKG_ROW.format("ii", "zlib1g:amd64", "1:1.2.13", "amd64", "compression library"),
]
_DOCKER_ROW = "{:<14} {:<14} {:<24} {:<13} {}"
DOCKER = [
    _DOCKER_ROW.format("CONTAINER ID", "IMAGE", "COMMAND", "STATUS", "NAMES"),
    _DOCKER_ROW.format("a1b2c3d4e5f6", "redis:7.2", '"docker-entrypoint.s"', "Up 3 hours", "cache"),
    _DOCKER_ROW.format("b2c3d4e5f6a7", "postgres:16", '"docker-entrypoint.s"', "Up 3 hours", "db"),
    _DOCKER_ROW.format("c3d4e5f6a7b8", "nginx:1.25", '"/docker-entrypoint."', "Up 2 min", "web"),
    _DOCKER_ROW.format("d4e5f6a7b8c9", "busybox:1.36", '"sleep 3600"', "Up 1 minute", "idle"),
]


def by_line(lines: list[str]) -> dict[int, list[str]]:
    return row_name_terms(list(range(len(lines))), find_tables(lines))


def test_each_row_carries_the_marks_of_its_name() -> None:
    marks = by_line(DPKG)
    assert marks[3] == ["¶openssl"]
    # The rows that only mention the name do not carry its mark.
    assert "¶openssl" not in marks[2] + marks[4]
    assert marks[2] == ["¶libgnutls-openssl27:amd64", "¶libgnutls-openssl27"]
    # Neither the header nor the rule names a row.
    assert 0 not in marks and 1 not in marks


def test_every_column_that_names_rows_marks_them() -> None:
    marks = by_line(DOCKER)
    # IMAGE, COMMAND and NAMES each name the container.
    assert marks[1] == ["¶redis:7-2", "¶redis", "¶docker-entrypoint-s", "¶cache"]
    assert {"¶nginx", "¶docker-entrypoint", "¶web"} <= set(marks[3])
    assert "¶a1b2c3d4e5f6" not in marks[1]


def test_a_table_without_a_name_column_marks_nothing() -> None:
    df = [
        "Size  Used Avail Use%",
        "12G      0   12G   0%",
        "24G    84K   24G   1%",
        "99G    40G   59G  41%",
    ]
    assert by_line(df) == {}


def test_a_segment_of_several_rows_carries_each_rows_marks() -> None:
    extremes, definitions, names, _ = mark_terms(DPKG, [0, 2, 4], listing=False)
    assert names == {
        1: ["¶libgnutls-openssl27:amd64", "¶libgnutls-openssl27", "¶openssl"],
        2: ["¶perl-openssl-defaults", "¶zlib1g:amd64", "¶zlib1g"],
    }
    assert definitions == {}


LS = [
    "total 1024",
    "-rwxr-xr-x 1 root root  98136 Sep 20  2022 gzexe",
    "-rwxr-xr-x 1 root root  98136 Sep 20  2022 gzip",
    "lrwxrwxrwx 1 root root     10 Apr  2  2025 python3 -> python3.11",
    "-rwxr-xr-x 1 root root 6831736 Apr  2  2025 python3.11",
]
# `find` lists a folder's files between another's: entries are not read in text order.
FIND = ["./a", "./a/x.txt", "./a/b", "./a/b/y.txt", "./a/z.txt", "./c.txt"]


def test_a_listings_entries_are_named_on_their_own_lines() -> None:
    entries = listed_entries(LS)
    assert [(line, entry.name) for line, entry in entries] == [
        (1, "gzexe"), (2, "gzip"), (3, "python3"), (4, "python3.11"),
    ]  # fmt: skip
    marks = row_name_terms(list(range(len(LS))), [], entries)
    assert marks[2] == ["¶gzip"] and marks[4] == ["¶python3-11"]
    # A symbolic link's row carries the words for one: "what does python3 link to?"
    assert marks[3] == ["¶python3", *lexical_terms("link symlink symbolic")]
    found = {line: entry.name for line, entry in listed_entries(FIND)}
    assert found == {0: "a", 1: "x.txt", 2: "b", 3: "y.txt", 4: "z.txt", 5: "c.txt"}
    # The listing's marks come with the other kinds when the text is a listing.
    names = mark_terms(LS, list(range(len(LS))), listing=True)[2]
    assert names[1] == ["¶gzexe"]
    assert mark_terms(LS, list(range(len(LS))), listing=False)[2] == {}


def test_a_reader_that_fails_costs_the_entry_its_marks_only(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A bug in one reader on one odd text must not fail the indexing of the namespace (and
    # so every Fit there): the entry keeps its words, without marks, and the log says so.
    def broken(*args: object) -> dict[int, list[str]]:
        raise ValueError("could not convert string to float: '2139108 0'")

    monkeypatch.setattr(marks, "extreme_terms", broken)
    with caplog.at_level(logging.ERROR, logger=marks.__name__):
        assert mark_terms(DPKG, [0, 2, 4], listing=False) == []
    assert "indexed without marks" in caplog.text


def test_an_item_named_by_its_head_carries_the_name_on_every_part() -> None:
    # `pip inspect`: each package an item cut in parts under the line naming it. "What does
    # grpcio require?" is about grpcio's own `requires_dist`, two segments below its name,
    # not the lines of packages that require grpcio.
    lines = [
        "    {",
        '        "name": "grpcio",',
        '        "version": "1.85.4",',
        '        "requires_dist": [',
        '          "typing-extensions~=4.12"',
        "        ]",
        "    },",
        "    {",
        '        "name": "grpcio-status",',
        '        "requires_dist": ["grpcio>=1.85.3"]',
        "    }",
    ]
    starts = [0, 1, 2, 3, 7, 8, 9]
    heads = [-1, -1, 1, 1, -1, -1, 5]
    marks = item_name_terms(lines, starts, heads)
    assert marks[1] == marks[2] == marks[3] == name_marks("grpcio")
    assert marks[6] == name_marks("grpcio-status") and 0 not in marks and 4 not in marks
    # The line that opens each record of a listing of records names it too (`pip show`).
    show = ["Name: grpcio", "Version: 1.85.4", "Requires: typing-extensions", "Name: redis"]
    assert item_name_terms(show, [0, 1, 2, 3], [-1, 0, 0, -1])[2] == name_marks("grpcio")
    # A head that names nothing (a key outside the name columns) marks nothing.
    assert item_name_terms(['  "version": "1.0",', "  x"], [0, 1], [-1, 0]) == {}
