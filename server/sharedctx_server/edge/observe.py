"""The outermost server interceptor: request ids, RPC metrics and tracing for every call.

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

from .interceptors import WrappingInterceptor, wrap_handler
from .logs import bind_request_id, unbind_request_id
from .metrics import Metrics
from .tracing import Tracing

log = logging.getLogger(__name__)

REQUEST_ID_HEADER = "x-request-id"


class ObserveInterceptor(WrappingInterceptor):
    """Binds a request id, then records the call's metrics and span; see the module docstring."""

    def __init__(self, metrics: Metrics | None = None, tracing: Tracing | None = None) -> None:
        super().__init__()
        self._metrics = metrics
        self._tracing = tracing

    @contextlib.contextmanager
    def _observed(
        self, method: str, kind: str, context: grpc.aio.ServicerContext
    ) -> Iterator[Callable[[Any], None]]:
        metadata = context.invocation_metadata() or ()
        incoming = next((v for k, v in metadata if k == REQUEST_ID_HEADER), None)
        request_id, token = bind_request_id(incoming if isinstance(incoming, str) else None)
        # Set first: an abort sends its status at once, with the trailing metadata set so far
        # (status.abort_with_error keeps it beside its error details).
        context.set_trailing_metadata(((REQUEST_ID_HEADER, request_id),))
        call = _Call(method, kind, request_id, self._metrics)
        spanned = (
            self._tracing.span(method, metadata, request_id)
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
                    if code == grpc.StatusCode.OK:
                        _keep_request_id(context, request_id)
                    call.finish(code)
                    if span is not None and self._tracing is not None:
                        self._tracing.finish(span, code)
        finally:
            with contextlib.suppress(ValueError):
                unbind_request_id(token)

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        """`handler` timed, counted, traced and tagged with a request id."""
        return wrap_handler(handler, around=partial(self._observed, method))


class _Call:
    """One RPC's measurements."""

    def __init__(self, method: str, kind: str, request_id: str, metrics: Metrics | None) -> None:
        service, _, name = method.lstrip("/").partition("/")
        self._labels = (service, name, kind)
        self._name = name
        self._request_id = request_id
        self._metrics = metrics
        self._started = time.perf_counter()
        if metrics is not None:
            metrics.rpc_started.labels(*self._labels).inc()
            metrics.rpc_in_flight.labels(name).inc()

    def reply(self, reply: Any) -> None:
        """Look at a unary reply (Fit replies feed the Fit histograms)."""
        if self._metrics is not None and isinstance(reply, pb.FitResponse):
            self._metrics.observe_fit(reply)

    def finish(self, code: grpc.StatusCode) -> None:
        """Record the outcome."""
        elapsed = time.perf_counter() - self._started
        log.debug("%s %s in %.1f ms", self._name, code.name, elapsed * 1000)
        if self._metrics is None:
            return
        self._metrics.rpc_in_flight.labels(self._name).dec()
        self._metrics.rpc_handled.labels(*self._labels, code.name).inc()
        self._metrics.rpc_seconds.labels(*self._labels, code.name).observe(elapsed)


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
