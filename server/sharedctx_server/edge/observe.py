"""The outermost layer around every handler: request ids, RPC metrics and tracing for every call.

Outermost so that it sees every outcome, including calls the decode guard or auth refuse, and
so that their log lines already carry the request id. The request id is the caller's
`x-request-id` when it sent an acceptable one, else a new one; it is returned to the caller as
trailing metadata `x-request-id` on success and on error alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import grpc
from sharedctx.v1 import sharedctx_pb2 as pb

from .interceptors import Layer, wrap_handler
from .logs import bind_request_id, unbind_request_id
from .metrics import Metrics
from .tracing import Tracing

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-request-id"


class ObserveInterceptor(Layer):
    """Binds a request id, then records the call's metrics and span; see the module docstring."""

    def __init__(self, metrics: Metrics | None = None, tracing: Tracing | None = None) -> None:
        self._metrics = metrics
        self._tracing = tracing

    @contextlib.contextmanager
    def _observed(
        self, method: str, kind: str, context: grpc.aio.ServicerContext
    ) -> Iterator[Callable[[Any], None]]:
        call = _Call(_Series(method, kind, self._metrics), context)
        spanned = (
            self._tracing.span(method, call.metadata, call.request_id)
            if self._tracing is not None
            else contextlib.nullcontext(None)
        )
        code = grpc.StatusCode.UNKNOWN  # what gRPC answers for an exception it did not expect
        try:
            with spanned as span:
                try:
                    yield call.reply  # wrap_handler hands it each unary reply
                    code = _code_of(context) or grpc.StatusCode.OK
                except grpc.aio.AbortError:
                    code = _code_of(context) or grpc.StatusCode.UNKNOWN
                    raise
                except (asyncio.CancelledError, GeneratorExit):
                    # The caller went away or its deadline passed.
                    code = grpc.StatusCode.CANCELLED
                    raise
                finally:
                    call.finish(code, context)
                    if span is not None and self._tracing is not None:
                        self._tracing.finish(span, code)
        finally:
            call.unbind()

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """`handler` timed, counted, traced and tagged with a request id."""
        if handler.unary_unary is None or self._tracing is not None:
            return wrap_handler(handler, around=partial(self._observed, method))
        return grpc.unary_unary_rpc_method_handler(
            self._unary(handler.unary_unary, method),
            handler.request_deserializer,
            handler.response_serializer,
        )

    def _unary(self, inner: Callable[..., Any], method: str) -> Callable[..., Any]:
        """_observed without a span, written out: most calls are unary and untraced, and the
        generator-based context manager was a tenth of a Get's server CPU (measured)."""
        series = _Series(method, "unary", self._metrics)

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            call = _Call(series, context)
            code = grpc.StatusCode.UNKNOWN
            try:
                reply = await inner(request, context)
                call.reply(reply)
                code = _code_of(context) or grpc.StatusCode.OK
                return reply
            except grpc.aio.AbortError:
                code = _code_of(context) or grpc.StatusCode.UNKNOWN
                raise
            except asyncio.CancelledError:
                code = grpc.StatusCode.CANCELLED  # the caller went away or its deadline passed
                raise
            finally:
                call.finish(code, context)
                call.unbind()

        return unary_unary


class _Series:
    """One method's metric series, looked up once: labels() takes a lock and a dict lookup."""

    def __init__(self, method: str, kind: str, metrics: Metrics | None) -> None:
        service, _, self.name = method.lstrip("/").partition("/")
        self._labels = (service, self.name, kind)
        self.metrics = metrics
        self.started = metrics.rpc_started.labels(*self._labels) if metrics else None
        self.in_flight = metrics.rpc_in_flight.labels(self.name) if metrics else None
        self._ended: dict[grpc.StatusCode, tuple[Any, Any]] = {}

    def ended(self, code: grpc.StatusCode) -> tuple[Any, Any]:
        """(handled counter, latency histogram) of calls that ended with `code`."""
        found = self._ended.get(code)
        if found is None:
            assert self.metrics is not None
            labels = (*self._labels, code.name)
            found = self._ended[code] = (
                self.metrics.rpc_handled.labels(*labels),
                self.metrics.rpc_seconds.labels(*labels),
            )
        return found


class _Call:
    """One RPC: its request id (bound for logs, returned as trailing metadata) and measurements."""

    def __init__(self, series: _Series, context: grpc.aio.ServicerContext) -> None:
        self.metadata = context.invocation_metadata() or ()
        incoming = next((v for k, v in self.metadata if k == REQUEST_ID_HEADER), None)
        self.request_id, self._token = bind_request_id(
            incoming if isinstance(incoming, str) else None
        )
        # Set first: an abort sends its status at once, with the trailing metadata set so far
        # (status.abort_with_error keeps it beside its error details).
        context.set_trailing_metadata(((REQUEST_ID_HEADER, self.request_id),))
        self._series = series
        self._started = time.perf_counter()
        if series.started is not None and series.in_flight is not None:
            series.started.inc()
            series.in_flight.inc()

    def reply(self, reply: Any) -> None:
        """Look at a unary reply (Fit replies feed the Fit histograms)."""
        if self._series.metrics is not None and isinstance(reply, pb.FitResponse):
            self._series.metrics.observe_fit(reply)

    def finish(self, code: grpc.StatusCode, context: grpc.aio.ServicerContext) -> None:
        """Record the outcome."""
        if code == grpc.StatusCode.OK:
            _keep_request_id(context, self.request_id)
        elapsed = time.perf_counter() - self._started
        log.debug("%s %s in %.1f ms", self._series.name, code.name, elapsed * 1000)
        if self._series.in_flight is None:
            return
        self._series.in_flight.dec()
        handled, seconds = self._series.ended(code)
        handled.inc()
        seconds.observe(elapsed)

    def unbind(self) -> None:
        """Forget the request id (logs outside the call show none)."""
        with contextlib.suppress(ValueError):
            unbind_request_id(self._token)


def _code_of(context: grpc.aio.ServicerContext) -> grpc.StatusCode | None:
    code = context.code()
    if code is None:
        return None
    if isinstance(code, grpc.StatusCode):
        return code
    # grpc.aio hands back the raw integer in some versions.
    return next((c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN)


def _keep_request_id(context: grpc.aio.ServicerContext, request_id: str) -> None:
    # A handler that set trailing metadata of its own replaced ours: add the id back.
    current = tuple(context.trailing_metadata() or ())
    if not any(k == REQUEST_ID_HEADER for k, _ in current):
        context.set_trailing_metadata((*current, (REQUEST_ID_HEADER, request_id)))
