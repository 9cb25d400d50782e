"""`sharedctx mcp` as MCP clients meet it: a subprocess over stdio or streamable HTTP."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcp import StdioServerParameters

from .redis_servers import free_port


def mcp_argv(target: str, *extra: str) -> list[str]:
    """The arguments of `sharedctx mcp` for `target` (run as `python -m sharedctx.cli`)."""
    return ["-m", "sharedctx.cli", "mcp", "--target", target, *extra]


def stdio_params(target: str, *extra: str) -> StdioServerParameters:
    """How an MCP client starts `sharedctx mcp` over stdio."""
    return StdioServerParameters(
        command=sys.executable, args=mcp_argv(target, *extra), env=dict(os.environ)
    )


@asynccontextmanager
async def http_mcp(target: str, *extra: str, timeout: float = 60) -> AsyncIterator[str]:
    """`sharedctx mcp --transport http` on a free loopback port, until it answers; yields the
    endpoint's URL and stops the process after."""
    port = free_port()
    argv = mcp_argv(target, "--transport", "http", "--listen", f"127.0.0.1:{port}", *extra)
    proc = subprocess.Popen([sys.executable, *argv], stderr=subprocess.PIPE)
    try:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            if proc.poll() is not None:
                raise AssertionError(f"sharedctx mcp exited: {proc.stderr.read().decode()}")  # type: ignore[union-attr]
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr is not None:
            proc.stderr.close()
