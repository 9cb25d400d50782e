"""segment.json_lines: a JSON record's statement is its level and message."""

from __future__ import annotations

import json

import numpy as np
from sharedctx_server.fit import Segments
from sharedctx_server.fit.segment_index import SegmentIndex, line_shape
from sharedctx_server.segment.json_lines import record_statement, statement_terms


def record(**fields: object) -> str:
    return json.dumps({"ts": "2026-12-07T08:01:42Z", **fields})


def test_a_records_statement_is_its_level_and_message() -> None:
    assert record_statement(record(level="warn", msg="token expired", user="u1")) == (
        "warn token expired"
    )
    assert record_statement(record(severity="ERROR", message="disk full")) == "ERROR disk full"
    assert record_statement(record(event="user.login")) == " user.login"  # no level
    # Not a record with a message: no statement.
    for line in (record(level="info", count=3), "[1, 2]", "{not json}", "plain text", "{}"):
        assert record_statement(line) is None


def test_one_statements_records_share_a_shape_whatever_their_fields() -> None:
    lines = [
        record(level="info", msg="request completed", path=p, method=m, user=u)
        for p, m, u in (("/v1/cart", "GET", "u1"), ("/v1/orders", "POST", "u2"))
    ]
    lines.append(record(level="warn", msg="token signature expired", path="/v1/cart"))
    lines.append("a line of text")
    terms = statement_terms(lines, [0, 1, 2, 3], [1, 1, 1, 1])
    assert terms[3] is None
    shapes = [line_shape(t) for t in terms if t is not None]
    assert shapes[0] == shapes[1] != shapes[2]
    # A text without records asks for nothing; a record spread over lines has no statement.
    assert statement_terms(["plain", "text"], [0, 1], [1, 1]) == []
    assert statement_terms(["{", '"msg": "x"', "}"], [0], [3]) == [None]


def test_the_segment_index_takes_a_records_shape_from_its_statement() -> None:
    ones = np.ones(3, dtype=np.int64)
    segments = Segments(ones, ones, np.zeros(3))
    own = [["info", "get", "cart"], ["info", "post", "orders"], ["warn", "token"]]
    statements = [["info", "request"], ["info", "request"], None]
    index = SegmentIndex()
    index.add(0, segments, own, shape_terms=statements)
    shapes = index.table().shapes.tolist()
    assert shapes[0] == shapes[1] == line_shape(["info", "request"])
    assert shapes[2] == line_shape(["warn", "token"])
