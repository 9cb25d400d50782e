"""The server's compressed form at Put: Get returns it by default, the original with full."""

from __future__ import annotations

import io
import json

import pytest
from sharedctx import AsyncClient, InvalidArgumentError
from sharedctx.cli import main

NS = "team-a/compress"


def _log() -> str:
    lines = [
        f"2025-01-01 10:00:{i % 60:02d} INFO worker-3 processed batch {i} ok" for i in range(300)
    ]
    lines[150] = "2025-01-01 10:02:30 ERROR worker-3 ValueError: batch 150 has a bad record"
    return "\n".join(lines)


async def test_get_returns_the_compressed_form_and_full_on_request(client: AsyncClient) -> None:
    content = _log()
    written = await client.put(NS, "logs/worker", content, kind="log")
    assert written.compressor == "log"
    assert written.compressed_tokens < written.original_tokens / 3
    short = await client.get(NS, "logs/worker")
    assert not short.full
    assert "ValueError: batch 150 has a bad record" in short.content
    full = await client.get(NS, "logs/worker", full=True)
    assert full.content == content
    stats = await client.stats(NS)
    assert stats.savings_percent > 60


async def test_json_tool_output_stays_valid_json(client: AsyncClient) -> None:
    items = [{"id": i, "status": "ok"} for i in range(100)] + [{"id": 7, "error": "Timeout"}]
    written = await client.put(NS, "tool/api", json.dumps(items, indent=1), kind="tool_output")
    assert written.compressor == "json"
    parsed = json.loads((await client.get(NS, "tool/api")).content)
    assert {"id": 7, "error": "Timeout"} in parsed


async def test_a_callers_compressed_form_wins(client: AsyncClient) -> None:
    written = await client.put(NS, "logs/mine", _log(), compressed="300 lines, one error")
    assert written.compressor == "caller"
    assert (await client.get(NS, "logs/mine")).content == "300 lines, one error"


async def test_small_content_is_stored_as_is(client: AsyncClient) -> None:
    written = await client.put(NS, "note", "short note")
    assert written.compressor == "none"
    assert written.compressed_tokens == written.original_tokens


async def test_binary_looking_content_is_rejected_and_not_stored(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match="content: looks binary"):
        await client.put(NS, "blob", "PK\x03\x04\x00\x00" * 50)
    # The compressed form is what Get and Fit return by default: held to the same rule.
    with pytest.raises(InvalidArgumentError, match="compressed: looks binary .* 10% control"):
        await client.put(NS, "blob", "a short text", compressed="a\x00b")
    assert [k async for k in client.keys(NS)] == []


def test_compress_command_shows_both_token_counts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(_log().encode())))
    assert main(["compress", "--json", "--kind", "log"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["compressor"] == "log"
    assert report["compressed_tokens"] < report["original_tokens"]
    assert "ValueError: batch 150" in report["compressed"]
