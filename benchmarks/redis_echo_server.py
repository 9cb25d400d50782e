"""A bare grpc.aio server that does one redis-py GET per call: the floor under any Python gRPC
service that reads Redis on every request, for side-by-side ratios.

Method `/bench.RedisEcho/Get` takes a Redis key as raw bytes and returns that key's value as
raw bytes (no protobuf, no validation, no interceptors, no Lua). Run by benchmarks.perf beside
the bare echo server and `sharedctx serve`, on the same Redis.
"""

from __future__ import annotations

import argparse
import asyncio

import grpc
import redis.asyncio as aioredis

from .echo_server import serve_bytes_method

GET_METHOD = "/bench.RedisEcho/Get"


async def serve(listen: str, redis_url: str) -> None:
    """Serve until SIGTERM."""
    redis = aioredis.Redis.from_url(redis_url)

    async def get(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return await redis.get(request) or b""

    try:
        await serve_bytes_method(listen, GET_METHOD, get)
    finally:
        await redis.aclose()


def main() -> None:
    """Entry point: python -m benchmarks.redis_echo_server --redis-url URL --listen HOST:PORT."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", required=True)
    parser.add_argument("--redis-url", required=True)
    args = parser.parse_args()
    asyncio.run(serve(args.listen, args.redis_url))


if __name__ == "__main__":
    main()
