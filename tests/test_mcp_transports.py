"""`sharedctx mcp` driven by the MCP SDK's own client, over stdio and over streamable HTTP,
against a real sharedctx server: the tools and their schemas, put, fit, and errors that come
back as tool errors with the gRPC status while the server keeps serving."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from sharedctx.cli import main
from sharedctx_server.server import RunningServer

from .support.mcp_servers import http_mcp, stdio_params
from .support.tool_outputs import FAILING_LINE, service_log

NS = "team-a/mcp"
TOOLS = {"put", "get", "keys", "delete", "fit", "stats"}


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def _exercise(client: Client) -> None:
    """The session every transport must carry: list tools, put, fit, get, errors."""
    listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(listed) == TOOLS
    fit_schema = listed["fit"].input_schema
    assert set(fit_schema["required"]) == {"namespace", "query", "budget_tokens"}
    assert {"strategy", "filters"} <= set(fit_schema["properties"])
    assert listed["fit"].output_schema is not None
    assert "budget" in (listed["fit"].description or "")
    assert listed["get"].annotations is not None and listed["get"].annotations.read_only_hint

    put = await client.call_tool(
        "put",
        {"namespace": NS, "key": "notes/plan", "content": "Fix the port config first.",
         "kind": "note", "tags": ["plan"]},
    )  # fmt: skip
    assert not put.is_error and put.structured_content["version"] == 1
    log = service_log(400)
    await client.call_tool(
        "put", {"namespace": NS, "key": "logs/service", "content": log, "kind": "log"}
    )

    fit = await client.call_tool(
        "fit", {"namespace": NS, "query": "why did the service fail?", "budget_tokens": 400}
    )
    assert not fit.is_error
    text = _text(fit)
    assert text.startswith(f"Fit of {NS}: 2 of 2 entries")
    assert "--- notes/plan | note | " in text and "Fix the port config first." in text
    assert "--- logs/service | log | " in text and "| excerpt: lines " in text
    assert FAILING_LINE in text
    structured = fit.structured_content
    assert [e["key"] for e in structured["entries"]] == ["notes/plan", "logs/service"]
    assert structured["entries"][1]["form"] == "excerpt"
    assert structured["total_tokens"] <= 400
    assert all(e["tokens"] > 0 and e["score"] >= 0 for e in structured["entries"])

    got = await client.call_tool("get", {"namespace": NS, "key": "notes/plan", "full": True})
    assert _text(got) == "Fix the port config first."
    assert got.structured_content["tags"] == ["plan"]

    missing = await client.call_tool("get", {"namespace": NS, "key": "nope"})
    assert missing.is_error and "NOT_FOUND: no entry 'nope'" in _text(missing)
    bad = await client.call_tool("stats", {"namespace": "no spaces allowed"})
    assert bad.is_error and "INVALID_ARGUMENT" in _text(bad)
    invalid = await client.call_tool("fit", {"namespace": NS, "query": "x", "budget_tokens": 0})
    assert invalid.is_error
    # Still serving after the errors.
    keys = await client.call_tool("keys", {"namespace": NS})
    assert keys.structured_content == {
        "keys": ["logs/service", "notes/plan"],
        "more": False,
        "cursor": "",
    }


async def test_over_stdio(server: RunningServer) -> None:
    async with Client(stdio_params(f"127.0.0.1:{server.port}")) as client:
        await _exercise(client)


async def test_over_streamable_http(server: RunningServer) -> None:
    async with http_mcp(f"127.0.0.1:{server.port}") as url, Client(url) as client:
        await _exercise(client)


async def test_http_with_a_token_refuses_clients_without_it(server: RunningServer) -> None:
    async with http_mcp(f"127.0.0.1:{server.port}", "--http-token", "s3cret") as url:
        async with httpx2.AsyncClient() as http:
            reply = await http.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert reply.status_code == 401
        headers = {"Authorization": "Bearer s3cret"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(url, http_client=http)
            async with Client(transport) as client:
                result = await client.call_tool("stats", {"namespace": NS})
                assert not result.is_error and result.structured_content["entries"] == 0


def test_http_beyond_loopback_needs_a_token(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["mcp", "--transport", "http", "--listen", "0.0.0.0:8765"])
    assert code == 2
    err = capsys.readouterr().err
    assert "refusing to serve MCP on 0.0.0.0:8765 without authentication" in err
    assert "--http-token" in err and "--insecure" in err
