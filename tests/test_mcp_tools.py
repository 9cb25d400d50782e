"""The MCP tools in process (the SDK's client connected to the MCPServer object): a pinned
namespace, keys' limit, fit's filters and strategy, delete and stats, an unreachable
sharedctx, and the command without the `mcp` extra."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client
from sharedctx import AsyncClient, PutItem
from sharedctx.cli import main
from sharedctx.mcp.command import INSTALL_HINT
from sharedctx.mcp.server import build
from sharedctx.mcp.tools import Tools
from sharedctx_server.server import RunningServer

from .support.redis_servers import free_port


@pytest.fixture(autouse=True)
def _quiet_sdk_logging(monkeypatch: pytest.MonkeyPatch) -> None:
    # MCPServer() configures the root logger, which belongs to the test run here.
    monkeypatch.setattr("mcp.server.mcpserver.server.configure_logging", lambda level: None)


@pytest.fixture
async def tools(server: RunningServer) -> AsyncIterator[Tools]:
    t = Tools(lambda: AsyncClient(f"127.0.0.1:{server.port}", timeout=10))
    yield t
    await t.close()


def _text(result: Any) -> str:
    return "\n".join(block.text for block in result.content)


async def test_a_pinned_namespace_is_not_asked_for(tools: Tools) -> None:
    async with Client(build(tools, namespace="team-b/pinned")) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        for tool in listed.values():
            assert "namespace" not in tool.input_schema.get("properties", {})
        assert listed["put"].input_schema["required"] == ["key", "content"]
        await client.call_tool("put", {"key": "k", "content": "pinned hello"})
        fit = await client.call_tool("fit", {"query": "hello", "budget_tokens": 100})
        assert _text(fit).startswith("Fit of team-b/pinned: 1 of 1 entries")
        # Another namespace is refused, not written to the pinned one; so is any argument
        # the schema does not name.
        for extra in ({"namespace": "team-b/other"}, {"knid": "note"}):
            refused = await client.call_tool("put", {"key": "k2", "content": "x", **extra})
            assert refused.is_error and "Extra inputs are not permitted" in _text(refused)
            assert next(iter(extra)) in _text(refused)
        assert all(t.input_schema.get("additionalProperties") is False for t in listed.values())
    assert (await tools.client().get("team-b/pinned", "k")).content == "pinned hello"
    assert [key async for key in tools.client().keys("team-b/pinned")] == ["k"]


async def test_schemas_describe_every_argument(tools: Tools) -> None:
    async with Client(build(tools)) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    put = listed["put"].input_schema["properties"]
    assert set(put) == {
        "namespace", "key", "content", "kind", "ttl_seconds", "tags", "importance", "thread"
    }  # fmt: skip
    kinds = {"message", "tool_output", "log", "document", "note"}
    assert set(put["kind"]["anyOf"][0]["enum"]) == kinds
    assert listed["get"].input_schema["properties"]["full"]["default"] is False
    assert set(listed["keys"].input_schema["properties"]) == {
        "namespace", "prefix", "limit", "cursor",
    }  # fmt: skip
    assert set(listed["delete"].input_schema["required"]) == {"namespace", "key"}
    assert listed["stats"].input_schema["required"] == ["namespace"]
    for tool in listed.values():
        assert tool.description and len(tool.description) > 40
        for name, prop in tool.input_schema["properties"].items():
            has_ref = "$ref" in str(prop)
            assert "description" in prop or has_ref, f"{tool.name}.{name} is undescribed"


async def test_keys_delete_stats_and_fit_options(tools: Tools) -> None:
    ns = "team-b/tools"
    async with Client(build(tools)) as client:
        for i in range(5):
            kind = "message" if i % 2 else "note"
            await client.call_tool(
                "put",
                {"namespace": ns, "key": f"k{i}", "content": f"entry number {i}", "kind": kind},
            )
        keys = await client.call_tool("keys", {"namespace": ns, "limit": 3})
        first = keys.structured_content
        assert first["keys"] == ["k0", "k1", "k2"] and first["more"] and first["cursor"]
        rest = await client.call_tool(
            "keys", {"namespace": ns, "limit": 3, "cursor": first["cursor"]}
        )
        assert rest.structured_content == {"keys": ["k3", "k4"], "more": False, "cursor": ""}
        exact = await client.call_tool("keys", {"namespace": ns, "limit": 5})
        assert exact.structured_content["more"] is False  # a full page with nothing after it
        keys = await client.call_tool("keys", {"namespace": ns, "prefix": "k4"})
        assert keys.structured_content == {"keys": ["k4"], "more": False, "cursor": ""}
        fit = await client.call_tool(
            "fit",
            {"namespace": ns, "query": "entry", "budget_tokens": 500, "strategy": "recent",
             "filters": {"include_kinds": ["message"]}},
        )  # fmt: skip
        assert [e["key"] for e in fit.structured_content["entries"]] == ["k1", "k3"]
        deleted = await client.call_tool("delete", {"namespace": ns, "key": "k0"})
        assert deleted.structured_content == {"deleted": True}
        stats = await client.call_tool("stats", {"namespace": ns})
        assert stats.structured_content["entries"] == 4
        empty = await client.call_tool("fit", {"namespace": "team-b/empty", "query": "x",
                                               "budget_tokens": 100})  # fmt: skip
        assert "0 of 0 entries" in _text(empty) and not empty.is_error
        assert _text(empty).endswith("Nothing is stored here.")
        none = await client.call_tool("fit", {"namespace": ns, "query": "x", "budget_tokens": 100,
                                              "filters": {"include_kinds": ["log"]}})  # fmt: skip
        assert _text(none).endswith("No stored entry passes the filters.")


async def test_an_unreachable_sharedctx_is_a_tool_error() -> None:
    port = free_port()
    tools = Tools(lambda: AsyncClient(f"127.0.0.1:{port}", timeout=2, retries=0))
    async with Client(build(tools)) as client:
        result = await client.call_tool("stats", {"namespace": "team-b/x"})
        assert result.is_error and "UNAVAILABLE" in _text(result)
        again = await client.call_tool("keys", {"namespace": "team-b/x"})
        assert again.is_error
        fit = await client.call_tool("fit", {"namespace": "team-b/x", "query": "q",
                                             "budget_tokens": 300})  # fmt: skip
        assert fit.is_error and "UNAVAILABLE" in _text(fit)
        assert "more than the server takes" not in _text(fit)  # for budget errors only
    await tools.close()


def test_without_the_mcp_extra_the_command_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "sharedctx.mcp.server", None)
    assert main(["mcp", "--target", "127.0.0.1:1"]) == 2
    assert capsys.readouterr().err == INSTALL_HINT + "\n"


def test_a_bad_target_or_a_taken_port_is_refused_before_serving(
    capsys: pytest.CaptureFixture[str],
) -> None:
    import socket

    assert main(["mcp", "--target", "http://127.0.0.1:1"]) == 2
    assert "sharedctx speaks gRPC, not http" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        assert main(["mcp", "--transport", "http", "--listen", f"127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().err == (
        f"sharedctx mcp: cannot listen on 127.0.0.1:{port}: Address already in use\n"
    )


def test_a_bad_pinned_namespace_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mcp", "-n", "no spaces"]) == 2
    assert "--namespace 'no spaces'" in capsys.readouterr().err


async def test_fits_text_with_its_headings_stays_within_the_budget(tools: Tools) -> None:
    from sharedctx_server.tokens import TokenCounter

    count = TokenCounter("o200k_base").count
    ns = "team-b/many"
    await tools.client().put_many(
        ns, [PutItem(key=f"chat/{i:02d}", content=f"ok {i}", kind="message") for i in range(30)]
    )
    async with Client(build(tools)) as client:
        for budget in (100, 300, 2000):
            fit = await client.call_tool(
                "fit", {"namespace": ns, "query": "ok", "budget_tokens": budget}
            )
            assert count(_text(fit)) <= budget, budget
            assert fit.structured_content["entries"]


async def test_small_budgets_give_the_best_entry_and_say_when_nothing_fits(tools: Tools) -> None:
    ns = "team-b/small"
    client_ = tools.client()
    await client_.put(ns, "tool/make", "make: *** [build] Error 2: undefined reference to main")
    for i in range(3):  # newer, and about something else
        await client_.put(ns, f"notes/{i}", f"lunch order {i}: soup", kind="note")
    async with Client(build(tools)) as client:
        # One slot at 100 tokens: the newest entries do not take it from the best one.
        fit = await client.call_tool(
            "fit", {"namespace": ns, "query": "why does the build fail?", "budget_tokens": 100}
        )
        assert [e["key"] for e in fit.structured_content["entries"]] == ["tool/make"]
        tiny = await client.call_tool(
            "fit", {"namespace": ns, "query": "build", "budget_tokens": 64}
        )
        assert "None fits the 0 tokens left for texts once headings are reserved" in _text(tiny)
        assert not tiny.structured_content["entries"] and not tiny.is_error
        # Below what the summary line takes, any text would be over the budget: an error.
        for budget in (1, 20):
            refused = await client.call_tool(
                "fit", {"namespace": ns, "query": "build", "budget_tokens": budget}
            )
            assert refused.is_error and (
                f"INVALID_ARGUMENT: budget_tokens: {budget} cannot hold even the summary line"
                in _text(refused)
            )
        for budget in (2_000_000, 10**12):  # past the limit, however far
            huge = await client.call_tool(
                "fit", {"namespace": ns, "query": "build", "budget_tokens": budget}
            )
            assert huge.is_error
            assert f"budget_tokens: {budget} is more than the server takes" in _text(huge)
            assert "exceeds the server's limit" in _text(huge)


async def test_long_keys_and_excerpts_keep_the_text_within_the_budget(tools: Tools) -> None:
    from sharedctx_server.tokens import TokenCounter

    count = TokenCounter("o200k_base").count
    ns = "team-b/long-keys"
    log = "\n".join(f"2026-05-01 10:00:{i % 60:02d} worker {i} stalled on lock {i * 7}"
                     for i in range(400))  # fmt: skip
    items = [PutItem(key=f"logs/{'deep/' * 40}worker-{i}.log", content=log, kind="log")
             for i in range(6)]  # fmt: skip
    await tools.client().put_many(ns, items)
    async with Client(build(tools)) as client:
        for budget in (120, 300, 800):
            fit = await client.call_tool(
                "fit", {"namespace": ns, "query": "worker 17 stalled", "budget_tokens": budget}
            )
            assert not fit.is_error and count(_text(fit)) <= budget, budget


async def test_slots_left_over_widen_until_the_answer_fits(tools: Tools) -> None:
    # A chat about a failing build and the build's log: the log's excerpt ranks below several
    # chat lines, beyond the first slots; the texts leave most of the budget, so the tool asks
    # again with more slots, and the error line comes back.
    ns = "team-b/widen"
    compiled = [
        f"[{i:03d}/400] compiled src/module_{i}.py in {i * 37 % 900} ms" for i in range(400)
    ]
    log = "\n".join(
        [*compiled, "src/app.py:41: error: KeyError: 'port'", "make: *** [build] Error 1"]
    )
    chat = [
        "The build fails since this morning.", "Which target?", "make build, on CI and locally.",
        "Did anything change in the config?", "Someone edited app.toml yesterday.",
        "I will run make and look at the log.", "Ok, thanks.", "Running it now.",
        "It takes a while to compile all the modules.", "Sure.", "The build is at module 300.",
        "Still building?", "Almost done.", "The build failed again.", "What does the log say?",
        "Let me look.",
    ]  # fmt: skip
    client_ = tools.client()
    await client_.put(ns, "tool/make", log, kind="tool_output", tool_name="make")
    for i, text in enumerate(chat):
        await client_.put(ns, f"chat/{i:02d}", text, kind="message", thread="t1")
    async with Client(build(tools)) as client:
        for budget in (500, 1000):
            fit = await client.call_tool(
                "fit",
                {"namespace": ns, "query": "why does the build fail?", "budget_tokens": budget},
            )
            assert "KeyError: 'port'" in _text(fit), budget


def test_a_heading_names_the_kind_only_when_the_writer_gave_one() -> None:
    from datetime import UTC, datetime

    from sharedctx.mcp.render import heading
    from sharedctx.types import FitEntry

    when = datetime(2026, 12, 2, 9, 14, 3, 250_000, tzinfo=UTC)
    note = FitEntry("notes/plan", 0, 1.0, "full", 5, "x", when, "note", "")
    assert heading(note) == "--- notes/plan | note | 2026-12-02T09:14:03Z"
    unsaid = FitEntry("scratch", 0, 1.0, "full", 5, "x", when, "unspecified", "")
    assert heading(unsaid) == "--- scratch | 2026-12-02T09:14:03Z"


def test_an_excerpts_heading_says_how_often_its_best_match_repeats() -> None:
    from datetime import UTC, datetime

    from sharedctx.mcp.render import heading
    from sharedctx.types import FitEntry

    when = datetime(2026, 12, 2, 9, 14, 3, tzinfo=UTC)
    log = FitEntry(
        "logs/gateway", 1, 1.0, "excerpt", 300, "x", when, "log", "",
        line_ranges=((65, 69),), total_lines=3000, repeats=((67, 54), (80, 135)),
    )  # fmt: skip
    # Only the best match's count: a heading's tokens come out of the budget too.
    assert heading(log) == (
        "--- logs/gateway | log | 2026-12-02T09:14:03Z | excerpt: lines 65-69 of 3000 | "
        "line 67 is one of 54 alike"
    )
