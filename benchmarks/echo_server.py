"""A bare grpc.aio server: the floor any gRPC service in Python pays, for side-by-side ratios.

Method `/bench.Echo/Echo` takes raw bytes whose first 4 (big-endian) give the reply size and
returns that many bytes (no protobuf parsing, no storage), so one server mirrors both a Get
(small request, payload-sized reply) and a Put (payload-sized request, small reply). It also
serves the health service so it can be waited on.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
from collections.abc import Awaitable, Callable

import grpc
from grpc_health.v1 import health, health_pb2_grpc

ECHO_METHOD = "/bench.Echo/Echo"


def _identity(data: bytes) -> bytes:
    return data


def request_for(reply_bytes: int, request_bytes: int) -> bytes:
    """An echo request of `request_bytes` asking for a reply of `reply_bytes`."""
    return reply_bytes.to_bytes(4, "big") + b"r" * max(0, request_bytes - 4)


Behaviour = Callable[[bytes, grpc.aio.ServicerContext], Awaitable[bytes]]


async def serve_bytes_method(listen: str, method: str, behaviour: Behaviour) -> None:
    """Serve one unary method on raw bytes (full name `/service/Method`), and the health
    service, on `listen` until SIGTERM."""
    service, name = method.strip("/").split("/")
    handler = grpc.method_handlers_generic_handler(
        service,
        {
            name: grpc.unary_unary_rpc_method_handler(
                behaviour, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    health_pb2_grpc.add_HealthServicer_to_server(health.aio.HealthServicer(), server)
    server.add_insecure_port(listen)
    await server.start()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    await stop.wait()
    await server.stop(1)


async def serve(listen: str) -> None:
    """Serve the echo until SIGTERM."""

    async def echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return b"x" * int.from_bytes(request[:4], "big")

    await serve_bytes_method(listen, ECHO_METHOD, echo)


def main() -> None:
    """Entry point: python -m benchmarks.echo_server --listen HOST:PORT."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.listen))


if __name__ == "__main__":
    main()
