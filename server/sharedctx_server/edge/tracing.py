"""OpenTelemetry tracing, on when OTEL_EXPORTER_OTLP_ENDPOINT is set and the packages are there.

Optional twice over: without the endpoint nothing is imported; with it but without the
packages (`pip install -e '.[tracing]'` in the sharedctx checkout), the server logs one line
and runs untraced.
The exporter reads the standard OTEL_* variables itself (endpoint, headers, protocol, ...).
Each server has its own TracerProvider rather than the process-global one, so that servers in
one process (tests) and the host application's own tracing stay apart.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import grpc

log = logging.getLogger(__name__)

# Server-side codes that mean the server failed, per the OpenTelemetry RPC conventions; the
# others (NOT_FOUND, INVALID_ARGUMENT...) are the caller's business and leave the span unset.
_SERVER_ERRORS = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DATA_LOSS,
    }
)


class Tracing:
    """Starts one SERVER span per RPC, continuing the caller's trace (W3C traceparent)."""

    def __init__(self, provider: Any) -> None:
        from opentelemetry import trace

        self._provider = provider
        self._tracer = provider.get_tracer("sharedctx_server")
        self._trace = trace

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Tracing | None:
        """A Tracing exporting over OTLP when configured and importable, else None."""
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        if not endpoint or env.get("OTEL_SDK_DISABLED", "").lower() == "true":
            return None
        protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get(
            "OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"
        )
        try:
            from opentelemetry.sdk.resources import Resource
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor

            if protocol.startswith("http"):
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import (  # type: ignore[import-not-found,unused-ignore]
                    OTLPSpanExporter,
                )
            else:
                from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (  # type: ignore[import-not-found,no-redef,unused-ignore]
                    OTLPSpanExporter,
                )
        except ImportError as exc:
            log.warning(
                "OTEL_EXPORTER_OTLP_ENDPOINT is set but tracing is unavailable (%s); "
                "install it with: pip install -e '.[tracing]' in the sharedctx checkout",
                exc,
            )
            return None
        # OTEL_SERVICE_NAME, when set, wins over our default name.
        attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "sharedctx"}
        provider = TracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        log.info("tracing: OTLP/%s to %s", protocol, endpoint)
        return cls(provider)

    @contextlib.contextmanager
    def span(
        self, method: str, metadata: Sequence[tuple[str, Any]] | None, request_id: str
    ) -> Iterator[Any]:
        """A SERVER span for `method` ('/pkg.Service/Method') that is current while open."""
        from opentelemetry import context, propagate

        service, _, name = method.lstrip("/").partition("/")
        carrier = {k: v for k, v in (metadata or ()) if isinstance(v, str)}
        span = self._tracer.start_span(
            f"{service}/{name}",
            context=propagate.extract(carrier),
            kind=self._trace.SpanKind.SERVER,
            attributes={
                "rpc.system": "grpc",
                "rpc.service": service,
                "rpc.method": name,
                "sharedctx.request_id": request_id,
            },
        )
        token = context.attach(self._trace.set_span_in_context(span))
        try:
            yield span
        finally:
            with contextlib.suppress(ValueError):
                context.detach(token)
            span.end()

    def finish(self, span: Any, code: grpc.StatusCode) -> None:
        """Record the call's status code on its span."""
        span.set_attribute("rpc.grpc.status_code", code.value[0])
        if code in _SERVER_ERRORS:
            from opentelemetry.trace import Status, StatusCode

            span.set_status(Status(StatusCode.ERROR, code.name))

    def shutdown(self) -> None:
        """Flush buffered spans and stop the exporter."""
        self._provider.shutdown()
