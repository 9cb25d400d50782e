"""Structured logs and request ids: the JSON format, and an id that follows each RPC."""

from __future__ import annotations

import io
import json
import logging
import re
from collections.abc import Iterator

import grpc
import pytest
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.edge import logs
from sharedctx_server.edge.observe import REQUEST_ID_HEADER
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving

NS = "team-a/logs"
GENERATED = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """The root logger, put back as it was (configure() replaces its handlers, pytest's too)."""
    root = logging.getLogger()
    ours = logging.getLogger("sharedctx_server")
    handlers, level, our_level = list(root.handlers), root.level, ours.level
    yield root
    for handler in list(root.handlers):
        root.removeHandler(handler)
    for handler in handlers:
        root.addHandler(handler)
    root.setLevel(level)
    ours.setLevel(our_level)


def test_debug_is_the_servers_own(root_logger: logging.Logger) -> None:
    # grpc's line per call, asyncio's and redis's would bury the line per RPC asked for.
    logs.configure("text", "debug", stream=io.StringIO())
    assert logging.getLogger("sharedctx_server.edge.observe").isEnabledFor(logging.DEBUG)
    for library in ("grpc._cython.cygrpc", "asyncio", "redis.asyncio.connection"):
        assert not logging.getLogger(library).isEnabledFor(logging.DEBUG)
        assert logging.getLogger(library).isEnabledFor(logging.INFO)
    logs.configure("text", "WARNING", stream=io.StringIO())
    assert not logging.getLogger("sharedctx_server.fit").isEnabledFor(logging.INFO)
    assert not logging.getLogger("grpc").isEnabledFor(logging.INFO)


class Collect(logging.Handler):
    """Keeps records, after the request-id filter has stamped them."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.addFilter(logs.RequestIdFilter())
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def test_json_lines_carry_time_level_logger_message_extras_and_exception(
    root_logger: logging.Logger,
) -> None:
    out = io.StringIO()
    logs.configure("json", "INFO", stream=out)
    log = logging.getLogger("sharedctx_server.example")
    log.debug("not at INFO")
    log.info("hello %s", "world", extra={"namespace": "team-a/x", "count": 3})
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        log.exception("it failed")
    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first["message"] == "hello world"
    assert (first["level"], first["logger"]) == ("INFO", "sharedctx_server.example")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}\+00:00", first["time"])
    assert (first["namespace"], first["count"]) == ("team-a/x", 3)
    assert "request_id" not in first  # logged outside any RPC
    assert second["level"] == "ERROR"
    assert "RuntimeError: boom" in second["exception"]


def test_text_lines_show_the_request_id(root_logger: logging.Logger) -> None:
    out = io.StringIO()
    logs.configure("text", "INFO", stream=out)
    _, token = logs.bind_request_id("req-7")
    try:
        logging.getLogger("x").info("inside")
    finally:
        logs.unbind_request_id(token)
    logging.getLogger("x").info("outside")
    inside, outside = out.getvalue().splitlines()
    assert "INFO x [req-7] inside" in inside
    assert "INFO x [-] outside" in outside


def test_unknown_format_is_refused() -> None:
    with pytest.raises(ValueError, match="text, json"):
        logs.make_handler("xml")


def test_a_callers_request_id_is_kept_unless_it_could_forge_log_lines() -> None:
    for incoming, kept in [
        ("abc-123", True),
        ("trace/00f0:span=1", True),
        ("x" * 129, False),
        ("two\nlines", False),
        ('{"json": 1}', False),
        ("", False),
        (None, False),
    ]:
        request_id, token = logs.bind_request_id(incoming)
        logs.unbind_request_id(token)
        if kept:
            assert request_id == incoming
        else:
            assert GENERATED.fullmatch(request_id), (incoming, request_id)


async def test_request_id_reaches_log_records_and_trailing_metadata(
    settings: Settings, token_counter: TokenCounter
) -> None:
    collect = Collect()
    observe_log = logging.getLogger("sharedctx_server.edge.observe")
    observe_log.addHandler(collect)
    level = observe_log.level
    observe_log.setLevel(logging.DEBUG)  # its per-call line is DEBUG
    try:
        async with (
            serving(settings, token_counter) as (running, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel,
        ):
            stub = pb_grpc.SharedContextStub(channel)
            call = stub.Put(
                pb.PutRequest(namespace=NS, key="k", content="v"),
                metadata=((REQUEST_ID_HEADER, "caller-chose-this"),),
            )
            await call
            put_trailers = dict(await call.trailing_metadata())

            missing = stub.Get(pb.GetRequest(namespace=NS, key="absent"))
            with pytest.raises(grpc.aio.AioRpcError) as info:
                await missing
            error_trailers = dict(info.value.trailing_metadata())
    finally:
        observe_log.removeHandler(collect)
        observe_log.setLevel(level)

    assert put_trailers[REQUEST_ID_HEADER] == "caller-chose-this"
    assert info.value.code() == grpc.StatusCode.NOT_FOUND
    generated = error_trailers[REQUEST_ID_HEADER]
    assert GENERATED.fullmatch(generated)
    # The error's details travel beside the id (the client maps them to typed errors).
    assert "grpc-status-details-bin" in error_trailers
    by_id = {r.request_id: r.getMessage() for r in collect.records}  # type: ignore[attr-defined]
    assert by_id["caller-chose-this"].startswith("Put OK")
    assert by_id[generated].startswith("Get NOT_FOUND")


def test_serve_refuses_an_unknown_log_format(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], root_logger: logging.Logger
) -> None:
    from sharedctx import cli

    refused = "--log-format / SHAREDCTX_LOG_FORMAT must be one of text, json, got 'xml'"
    assert cli.main(["serve", "--log-format", "xml"]) == 2
    assert refused in capsys.readouterr().err
    monkeypatch.setenv("SHAREDCTX_LOG_FORMAT", "xml")
    assert cli.main(["serve"]) == 2
    assert refused in capsys.readouterr().err
