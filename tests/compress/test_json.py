"""The JSON compressor: valid output, source-exact items, omission markers, long strings."""

from __future__ import annotations

import json
import random
import re

import pytest
from sharedctx_server.compress import CompressConfig, compress
from sharedctx_server.compress.json_compress import compress_json, looks_like_json
from sharedctx_server.compress.json_scan import scan_json
from sharedctx_server.compress.json_strings import shorten_string
from sharedctx_server.fit import MODERATE
from sharedctx_server.tokens import TokenCounter

from .strategies import letters_name

ITEMS_MARKER = re.compile(r"^… (\d+) of (\d+) items omitted; Get with full=true for all$")


def _records(n: int, errors: dict[int, str] | None = None) -> list[dict[str, object]]:
    errors = errors or {}
    return [
        {
            "id": 1000 + i,
            "status": "failed" if i in errors else "ok",
            "message": errors.get(i, f"order {1000 + i} processed in {i % 17} ms"),
            "region": "eu-west-1",
        }
        for i in range(n)
    ]


def _omitted(values: list[object]) -> int:
    total = 0
    for value in values:
        if isinstance(value, str) and (m := ITEMS_MARKER.match(value)):
            total += int(m.group(1))
    return total


@pytest.mark.parametrize("indent", [None, 2])
def test_array_keeps_first_last_errors_and_marks_what_it_left_out(
    token_counter: TokenCounter, indent: int | None
) -> None:
    errors = {37: "ValueError: price must be positive", 88: "upstream timed out"}
    items = _records(150, errors)
    text = json.dumps(items, indent=indent)
    result = compress(text, count_tokens=token_counter.count, tool_name="api")
    assert result.compressor == "json"
    out = json.loads(result.text)
    kept = [v for v in out if isinstance(v, dict)]
    assert kept[0] == items[0] and kept[-1] == items[-1]
    assert [k for k in kept if k["id"] in (1037, 1088)] == [items[37], items[88]]
    # Kept items are a subsequence of the original, and the markers account for the rest.
    positions = [items.index(k) for k in kept]
    assert positions == sorted(positions)
    assert _omitted(out) == len(items) - len(kept) > 0
    # Each kept item is its source text, byte for byte.
    for item in kept:
        assert json.dumps(item, indent=indent).replace("\n", "\n" + " " * (indent or 0)) in (
            result.text
        )


def test_json_after_a_tools_warnings_is_compressed_as_json(token_counter: TokenCounter) -> None:
    # `ruff check --output-format json 2>&1`: warnings, then the document. Read as a log, its
    # lines folded across items, showing one item's fields under another's name.
    warnings = [
        "warning: `D203` and `D211` are incompatible. Ignoring `D203`.",
        "warning: `D212` and `D213` are incompatible. Ignoring `D213`.",
    ]
    items = _records(150, {37: "ValueError: price must be positive"})
    text = "\n".join([*warnings, json.dumps(items, indent=2)])
    result = compress(text, count_tokens=token_counter.count, tool_name="ruff")
    assert result.compressor == "json"
    lines = result.text.split("\n")
    assert lines[:2] == warnings
    out = json.loads("\n".join(lines[2:]))
    assert out[0] == items[0] and items[37] in out and _omitted(out) > 0
    assert compress(result.text, count_tokens=token_counter.count).text == result.text


def test_marker_sits_where_items_were_removed(token_counter: TokenCounter) -> None:
    text = json.dumps(_records(120), indent=2)
    out = json.loads(compress(text, count_tokens=token_counter.count).text)
    for before, marker, after in zip(out, out[1:], out[2:], strict=False):
        if isinstance(marker, str):
            m = ITEMS_MARKER.match(marker)
            assert m is not None and int(m.group(2)) == 120
            assert after["id"] - before["id"] - 1 == int(m.group(1))


def test_arrays_nested_in_objects_are_compressed_and_the_rest_kept(
    token_counter: TokenCounter,
) -> None:
    doc = {
        "version": "1",
        "data": {"page": 3, "items": _records(100)},
        "meta": {"took_ms": 12, "warnings": []},
    }
    text = json.dumps(doc, indent=2)
    out = json.loads(compress(text, count_tokens=token_counter.count).text)
    assert out["version"] == "1" and out["meta"] == doc["meta"] and out["data"]["page"] == 3
    assert _omitted(out["data"]["items"]) > 0


def test_objects_with_many_members_get_one_omitted_key() -> None:
    doc = {f"pkg-{i}": {"version": f"1.{i}.0", "license": "MIT"} for i in range(60)}
    text = json.dumps(doc, indent=2)
    out_text = compress_json(text, MODERATE, CompressConfig())
    out = json.loads(out_text)
    assert out_text.count('"_omitted"') == 1
    note = out["_omitted"]
    m = re.match(r"^… (\d+) of 60 keys omitted; Get with full=true for all$", note)
    assert m is not None and int(m.group(1)) == 60 - (len(out) - 1)
    assert all(out[k] == doc[k] for k in out if k != "_omitted")


def test_an_object_that_has_an_omitted_key_is_left_whole() -> None:
    doc = {f"k{i}": i for i in range(60)} | {"_omitted": "mine"}
    text = json.dumps(doc, indent=2)
    assert json.loads(compress_json(text, MODERATE, CompressConfig())) == doc


def test_long_strings_keep_their_head_and_error_lines() -> None:
    readme = "\n".join(
        ["# fastlib", "A fast library.", ""]
        + [f"Section {i}: how to configure option {i}." for i in range(80)]
        + ["If you see ImportError: libfoo.so, install libfoo."]
        + [f"More prose {i}." for i in range(40)]
    )
    text = json.dumps({"name": "fastlib", "description": readme}, indent=2)
    out_text = compress_json(text, MODERATE, CompressConfig())
    description = json.loads(out_text)["description"]
    assert description.startswith("# fastlib\nA fast library.")
    assert "If you see ImportError: libfoo.so, install libfoo." in description.split("\n")
    assert re.search(r"\[\.\.\. \d+ lines omitted\]", description)
    assert len(out_text) < len(text) / 2


def test_a_long_single_line_string_is_cut_after_its_head() -> None:
    blob = "QUJD" * 1000
    out = json.loads(compress_json(json.dumps({"data": blob}), MODERATE, CompressConfig()))
    assert out["data"].startswith("QUJD" * 10)
    assert out["data"].endswith("chars omitted]")


@pytest.mark.parametrize(
    "inner",
    [
        "a" * 299 + "\\u00e9" + "b" * 2000,  # cut would fall inside \u00e9
        "a" * 298 + "\\ud83d\\ude00" + "b" * 2000,  # ... or between a surrogate pair
        "a" * 299 + '\\"' + "b" * 2000,  # ... or inside \"
        "\\\\" * 200 + "n" * 2000,  # escaped backslashes followed by n are not line breaks
        "a" * 294 + "\\\\ud83d" + "b" * 2000,  # an escaped backslash, then text like an escape
        "x\\n" + "y" * 5000 + "\\nlast",  # a long line after a short first one is cut too
    ],
)
def test_shortening_never_splits_an_escape(inner: str) -> None:
    raw = f'"{inner}"'
    short = shorten_string(raw, 300)
    decoded = json.loads(short)
    assert len(short) < len(raw)
    assert "\ud83d" not in decoded or "\ude00" in decoded
    assert json.loads(raw).startswith(decoded.split(" [... ")[0])


def test_source_layout_is_kept_for_kept_items(token_counter: TokenCounter) -> None:
    # Odd but valid spacing must come through unchanged around kept items.
    body = ",\n".join(f'  {{ "id" : {i} ,  "ok":true }}' for i in range(80))
    text = "[\n" + body + "\n]\n"
    result = compress(text, count_tokens=token_counter.count)
    assert result.text.startswith('[\n  { "id" : 0 ,  "ok":true },\n')
    assert result.text.endswith('  { "id" : 79 ,  "ok":true }\n]\n')


def test_scanner_spans_match_the_source() -> None:
    text = ' {"a": [1, "x,]}", {"b": [true]}], "c": {"d": null}} '
    scan = scan_json(text, max_depth=2, long_chars=1000)
    root = scan.root
    assert text[root.start : root.end] == text.strip()
    assert [text[s:e] for s, e in root.keys] == ['"a"', '"c"']
    array = root.values[0]
    assert [text[v.start : v.end] for v in array.values] == ["1", '"x,]}"', '{"b": [true]}']


def test_scanner_tells_keys_by_the_colon_after_them() -> None:
    # Keys before spaced and bare colons; strings holding colons, quotes and brackets; an
    # array of strings in an object (values, never keys) and an empty key.
    text = '{"a" :\t"b:", "c":["d", "e\\":"], "" : {"f" : "[:]"}, "g":{}}'
    scan = scan_json(text, max_depth=2, long_chars=1000)
    root = scan.root
    assert [text[s:e] for s, e in root.keys] == ['"a"', '"c"', '""', '"g"']
    assert [text[v.start : v.end] for v in root.values[:2]] == ['"b:"', '["d", "e\\":"]']
    assert [text[v.start : v.end] for v in root.values[1].values] == ['"d"', '"e\\":"']
    inner = root.values[2]
    assert [text[s:e] for s, e in inner.keys] == ['"f"']
    assert [text[v.start : v.end] for v in inner.values] == ['"[:]"']
    assert text[root.values[3].start : root.values[3].end] == "{}"


def test_json_detection() -> None:
    assert looks_like_json("  [1, 2]\n")
    assert looks_like_json('{"tab\there": 1}')  # raw control characters, as some tools print
    assert not looks_like_json("[INFO] starting\n[INFO] done]")
    assert not looks_like_json('"just a string"')
    assert not looks_like_json("[" * 100_000 + "]" * 100_000)  # too deep to parse: not JSON


def test_records_that_differ_only_in_numbers_fold_to_a_few(token_counter: TokenCounter) -> None:
    names = json.dumps([{"name": f"pkg{i}", "version": f"1.{i}"} for i in range(60)])
    out = json.loads(compress(names, count_tokens=token_counter.count).text)
    assert out[0] == {"name": "pkg0", "version": "1.0"}
    assert out[-1] == {"name": "pkg59", "version": "1.59"}
    assert _omitted(out) == 60 - sum(isinstance(v, dict) for v in out) >= 50


def test_arrays_under_the_minimum_are_left_alone(token_counter: TokenCounter) -> None:
    doc = json.dumps({"rows": _records(8), "pad": "x" * 600}, indent=2)
    assert compress(doc, count_tokens=token_counter.count).compressor == "none"


def test_a_one_line_array_on_an_error_line_of_a_multiline_document_is_kept_whole() -> None:
    tags = ", ".join(f'"tag-{i}"' for i in range(40)) + ', "build failed"'
    text = '{\n  "name": "x",\n  "tags": [' + tags + '],\n  "pad": 1\n}'
    assert compress_json(text, MODERATE, CompressConfig()) == text


NAMED_MARKER = re.compile(
    r"^… (\d+) of (\d+) items omitted \(name: (.*)\); Get with full=true for all$"
)


def test_an_array_of_flat_records_is_a_table_that_names_what_it_left_out(
    token_counter: TokenCounter,
) -> None:
    # `pip list --format json`: records all distinct, one with a key the others lack.
    packages = [{"name": f"lib{letters_name(i)}", "version": f"{i % 7}.{i}.0"} for i in range(130)]
    packages[60]["editable_project_location"] = "/src/libcli"
    text = json.dumps(packages)
    result = compress(text, count_tokens=token_counter.count)
    assert result.compressor == "json"
    assert token_counter.count(result.text) <= 0.4 * token_counter.count(text)
    out = json.loads(result.text)
    kept = [v for v in out if isinstance(v, dict)]
    assert kept == [*packages[:3], packages[-1]]
    markers = [NAMED_MARKER.match(v) for v in out if isinstance(v, str)]
    assert len(markers) == 1 and markers[0] is not None
    assert markers[0].group(3).split(", ") == [p["name"] for p in packages[3:-1]]
    again = compress(result.text, count_tokens=token_counter.count)
    assert again.text == result.text  # a compressed form is recognised as one


def test_records_keep_their_rare_status_and_largest_values(token_counter: TokenCounter) -> None:
    pods = [
        {"pod": f"web-{letters_name(i)}", "status": "Running", "restarts": i % 2, "node": "n1"}
        for i in range(50)
    ]
    pods[20]["status"] = "CrashLoopBackOff"
    pods[31]["restarts"] = 42
    out = json.loads(compress(json.dumps(pods, indent=2), count_tokens=token_counter.count).text)
    kept = [v["pod"] for v in out if isinstance(v, dict)]
    assert pods[20]["pod"] in kept and pods[31]["pod"] in kept
    assert kept[:3] == [p["pod"] for p in pods[:3]] and kept[-1] == pods[-1]["pod"]


def test_records_that_carry_prose_are_sized_not_read_as_a_table(
    token_counter: TokenCounter,
) -> None:
    # Search results: each snippet says something the others do not.
    rng = random.Random(7)
    results = [
        {
            "title": f"Result {letters_name(i)}",
            "url": f"https://example.org/{letters_name(i)}",
            "snippet": " ".join(letters_name(rng.randrange(20_000)) for _ in range(40)) + ".",
        }
        for i in range(12)
    ]
    text = json.dumps(results, indent=2)
    out = json.loads(compress(text, count_tokens=token_counter.count).text)
    assert out == results  # every result says something of its own: none left out


def test_json_after_a_byte_order_mark_is_compressed_as_json(token_counter: TokenCounter) -> None:
    doc = [
        {"id": i, "status": "failed: disk quota exceeded" if i == 1234 else "ok"}
        for i in range(3000)
    ]
    for text in ("\ufeff" + json.dumps(doc), "\ufeff" + json.dumps(doc, indent=2)):
        result = compress(text, count_tokens=token_counter.count, kind="tool_output")
        assert result.compressor == "json"
        assert result.compressed_tokens < result.original_tokens // 10
        assert result.text.startswith("\ufeff")  # kept as the document had it
        assert "disk quota exceeded" in json.dumps(json.loads(result.text.removeprefix("\ufeff")))
