"""OpenTelemetry: one SERVER span per RPC when configured; a clear line when not installed."""

from __future__ import annotations

import logging
import sys

import grpc
import pytest
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.edge.observe import REQUEST_ID_HEADER
from sharedctx_server.edge.tracing import Tracing
from sharedctx_server.settings import Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving

NS = "team-a/traces"
CALLER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
TRACEPARENT = f"00-{CALLER_TRACE}-00f067aa0ba902b7-01"


async def test_each_rpc_is_a_server_span_in_the_callers_trace(
    settings: Settings, token_counter: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The SDK (the `tracing` extra) brings the in-memory exporter; without it, only the tests
    # below that need no SDK run.
    pytest.importorskip("opentelemetry.sdk.trace", reason="opentelemetry-sdk is not installed")
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from opentelemetry.trace import SpanKind, StatusCode

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(Tracing, "from_env", classmethod(lambda cls, env: cls(provider)))
    async with (
        serving(settings, token_counter) as (running, _),
        grpc.aio.insecure_channel(f"127.0.0.1:{running.port}") as channel,
    ):
        stub = pb_grpc.SharedContextStub(channel)
        call = stub.Put(
            pb.PutRequest(namespace=NS, key="k", content="v"),
            metadata=(("traceparent", TRACEPARENT),),
        )
        await call
        request_id = dict(await call.trailing_metadata())[REQUEST_ID_HEADER]
        with pytest.raises(grpc.aio.AioRpcError):
            await stub.Get(pb.GetRequest(namespace=NS, key="absent"))
    spans = {s.name: s for s in exporter.get_finished_spans()}
    put = spans["sharedctx.v1.SharedContext/Put"]
    assert put.kind == SpanKind.SERVER
    assert put.attributes is not None
    assert put.attributes["rpc.system"] == "grpc"
    assert put.attributes["rpc.method"] == "Put"
    assert put.attributes["rpc.grpc.status_code"] == 0
    assert put.attributes["sharedctx.request_id"] == request_id
    assert format(put.context.trace_id, "032x") == CALLER_TRACE
    get = spans["sharedctx.v1.SharedContext/Get"]
    assert get.attributes is not None
    assert get.attributes["rpc.grpc.status_code"] == grpc.StatusCode.NOT_FOUND.value[0]
    # NOT_FOUND is the caller's business, not a server error.
    assert get.status.status_code == StatusCode.UNSET
    assert format(get.context.trace_id, "032x") != CALLER_TRACE


def test_tracing_is_off_without_an_endpoint_and_on_with_one() -> None:
    assert Tracing.from_env({}) is None
    assert Tracing.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": ""}) is None
    env = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317", "OTEL_SDK_DISABLED": "true"}
    assert Tracing.from_env(env) is None
    pytest.importorskip("opentelemetry.exporter.otlp.proto.grpc.trace_exporter")
    tracing = Tracing.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"})
    assert tracing is not None
    tracing.shutdown()  # nothing was recorded, so nothing is sent


def test_without_the_packages_tracing_says_so_once_and_stays_off(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(sys.modules, "opentelemetry.sdk.trace", None)  # import fails
    with caplog.at_level(logging.WARNING, logger="sharedctx_server.edge.tracing"):
        assert Tracing.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"}) is None
    (record,) = caplog.records
    assert "tracing is unavailable" in record.getMessage()
    assert "pip install -e '.[tracing]'" in record.getMessage()
