"""The MCP server: sharedctx's tools on the SDK's `MCPServer`, served over stdio or streamable
HTTP (optionally behind a bearer token, checked by the SDK's own bearer-auth middleware)."""

from __future__ import annotations

import hashlib
import hmac
import sys
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import anyio
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase
from mcp.types import ToolAnnotations
from pydantic import ConfigDict

from ..client import AsyncClient
from .tools import Tools, pinned

INSTRUCTIONS = """\
sharedctx is a context store shared by agents: what one agent stores, others can read.
Before starting a task or answering, call `fit` with what you are working on and a token
budget: it returns the stored context that matters most for it, packed into the budget.
Call `put` to keep what others (or you, later) will need: findings, plans, tool outputs,
logs, decisions. Use `get` for one entry you know the key of, `keys` to see what exists,
`delete` to remove an entry, `stats` for the namespace's size."""

# Per tool: what it is for (the model's cue for when to call it), and its hints.
DESCRIPTIONS = {
    "put": (
        "Store a piece of context under a key so that this and other agents can use it later: "
        "a finding, a plan, a decision, a tool output, a log, a message. Writing an existing "
        "key replaces it. Use stable, descriptive keys ('notes/plan', 'tool/pytest#3'); set "
        "kind, tags, thread and importance so that fit can choose well."
    ),
    "get": (
        "Read one entry by its exact key (from keys or fit). Returns the compressed form, "
        "which keeps every error line; pass full=true for the original text, e.g. for the "
        "lines an excerpt left out."
    ),
    "keys": "List the keys of the stored entries, optionally those starting with a prefix; "
    "when `more` is true, call again with the returned `cursor` for the next ones.",
    "delete": "Remove one entry by key (when it is wrong or no longer useful).",
    "fit": (
        "Get the stored context that best answers a query, packed into a token budget. Call "
        "this before a task or an answer instead of reading entries one by one: it ranks "
        "every entry (meaning, words, recency, errors, importance) and returns the best that "
        "fit budget_tokens, oldest first, each headed by its key, kind and time. A large "
        "entry (a log, a long output) may come back as an excerpt of the lines that match, "
        "marked with the lines shown and with how many lines alike the entry holds ('line 67 "
        "is one of 54 alike': the answer to 'how many times?'); get it with full=true for "
        "the rest."
    ),
    "stats": "Totals of the namespace: entries, tokens (original and compressed), bytes.",
}
HINTS = {
    "put": ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    "get": ToolAnnotations(read_only_hint=True),
    "keys": ToolAnnotations(read_only_hint=True),
    "delete": ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True),
    "fit": ToolAnnotations(read_only_hint=True),
    "stats": ToolAnnotations(read_only_hint=True),
}


class StaticToken:
    """The SDK's TokenVerifier for one shared bearer token (compared as digests, in constant
    time)."""

    def __init__(self, token: str) -> None:
        self._digest = hashlib.sha256(token.encode()).digest()

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access of a matching token, None for any other."""
        digest = hashlib.sha256(token.encode()).digest()
        if not hmac.compare_digest(digest, self._digest):
            return None
        return AccessToken(token=token, client_id="sharedctx-mcp", scopes=[])


def _version() -> str:
    try:
        return version("sharedctx")
    except PackageNotFoundError:
        return ""


def build(
    tools: Tools,
    namespace: str | None = None,
    http_token: str | None = None,
    issuer: str = "http://127.0.0.1",
) -> MCPServer:
    """The MCP server for `tools`; with `namespace`, every tool works in it and does not ask
    for one. `http_token` makes streamable HTTP require it as a bearer token (`issuer`: the
    server's own URL, the issuer of that token)."""
    auth: dict[str, Any] = {}
    if http_token:
        auth = {
            # No OAuth server: the token is this server's own, so there is no metadata to
            # publish (resource_server_url None) and the issuer is the server itself.
            "auth": AuthSettings(issuer_url=issuer, resource_server_url=None),  # type: ignore[arg-type]
            "token_verifier": StaticToken(http_token),
        }
    instructions = INSTRUCTIONS
    if namespace:
        instructions += f"\nEvery tool works in the namespace {namespace!r}."
    server: MCPServer = MCPServer(
        "sharedctx", instructions=instructions, version=_version(), log_level="WARNING", **auth
    )
    for name, description in DESCRIPTIONS.items():
        method: Callable[..., Any] = getattr(tools, name)
        if namespace:
            method = pinned(method, namespace)
        server.add_tool(method, name=name, description=description, annotations=HINTS[name])
        _refuse_unknown_arguments(server, name)
    return server


def _refuse_unknown_arguments(server: MCPServer, name: str) -> None:
    """Make the tool refuse arguments its schema does not name (the SDK ignores them): a
    `namespace` sent to a server pinned to another was dropped and the entry written to the
    pinned one, and a misspelt `kind` was dropped. The schema says
    `additionalProperties: false` too."""
    tool = server._tool_manager.get_tool(name)  # the SDK has no public way to reach it
    assert tool is not None
    loose = tool.fn_metadata.arg_model
    config = ConfigDict(**{**loose.model_config, "extra": "forbid"})
    # Named as the SDK named it: validation errors say "1 validation error for putArguments".
    strict: type[ArgModelBase] = type(
        loose.__name__, (loose,), {"model_config": config, "__module__": __name__}
    )
    tool.fn_metadata.arg_model = strict
    tool.parameters = strict.model_json_schema(by_alias=True)


async def _serve_then_close(tools: Tools, serve: Callable[[], Any]) -> None:
    try:
        await serve()
    finally:
        with anyio.CancelScope(shield=True):
            await tools.close()


def run(
    connect: Callable[[], AsyncClient],
    namespace: str | None,
    transport: str,
    host: str = "127.0.0.1",
    port: int = 8765,
    http_token: str | None = None,
    token_encoding: str = "o200k_base",
) -> None:
    """Serve until stdin closes (stdio) or the process is interrupted (http)."""
    tools = Tools(connect, token_encoding)
    url_host = f"[{host}]" if ":" in host else host
    server = build(tools, namespace, http_token, issuer=f"http://{url_host}:{port}")
    if transport == "stdio":
        anyio.run(_serve_then_close, tools, server.run_stdio_async)
    else:

        async def http() -> None:
            await server.run_streamable_http_async(host=host, port=port)

        # Like `serve` and `ui`, say where to connect (stdout belongs to stdio's protocol, and
        # the SDK logs only warnings).
        print(f"sharedctx mcp: streamable HTTP at http://{url_host}:{port}/mcp", file=sys.stderr)
        anyio.run(_serve_then_close, tools, http)
