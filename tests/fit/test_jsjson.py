"""arg_text reproduces JavaScript's JSON.stringify(args).slice(0, 200)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from sharedctx_server.fit import arg_text
from sharedctx_server.fit.jsjson import js_number


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (0, "0"),
        (False, "false"),
        ("", '""'),
        ({}, "{}"),
        ([], "[]"),
        (1.0, "1"),
        (-0.0, "0"),
        (math.nan, "null"),
        (math.inf, "null"),
        (1e21, "1e+21"),
        (1e16, "10000000000000000"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (2**60, "1152921504606847000"),
        ({"q": "hello", "n": 1}, '{"q":"hello","n":1}'),
        ({"b": 1, "2": 2, "10": 3, "01": 4}, '{"2":2,"10":3,"b":1,"01":4}'),
        ([None, True, (1, 2)], "[null,true,[1,2]]"),
        ("é 東京 😀 \u2028", '"é 東京 😀 \u2028"'),
        ('q"\\\n\x01', '"q\\"\\\\\\n\\u0001"'),
        ("\ud800", '"\\ud800"'),
    ],
)
def test_arg_text_matches_json_stringify(value: Any, expected: str) -> None:
    assert arg_text(value) == expected


def test_none_and_unserialisable_values_give_empty_text() -> None:
    circular: dict[str, Any] = {}
    circular["self"] = circular
    assert arg_text(None) == ""
    assert arg_text(circular) == ""
    assert arg_text({"when": object()}) == ""
    assert arg_text({1, 2}) == ""


def test_shared_but_acyclic_values_serialise() -> None:
    shared = [1]
    assert arg_text({"a": shared, "b": shared}) == '{"a":[1],"b":[1]}'


def test_cut_at_200_utf16_units_dropping_a_split_surrogate_pair() -> None:
    assert len(arg_text({"text": "x" * 500})) == 200
    # '{"t":"' is 6 units; 193 x's make 199; the emoji (2 units) would straddle 200.
    cut = arg_text({"t": "x" * 193 + "😀"})
    assert cut == '{"t":"' + "x" * 193
    whole = arg_text({"t": "x" * 192 + "😀"})
    assert whole.endswith("😀") and len(whole.encode("utf-16-le")) // 2 == 200


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (123.456, "123.456"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (5e-324, "5e-324"),
        (-1234.5, "-1234.5"),
        (1e20, "100000000000000000000"),
    ],
)
def test_js_number_formatting(value: float, expected: str) -> None:
    assert js_number(value) == expected
