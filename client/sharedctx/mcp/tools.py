"""The MCP tools, each one sharedctx call: put, get, keys, delete, fit, stats.

Each method's signature is its tool's input schema (descriptions in `Field`s); server.py
registers them, with `namespace` bound when the server pins one. A failed call becomes an
MCP tool error (is_error) carrying the gRPC status and message, never a crash.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any, ParamSpec, TypeVar

import grpc
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent
from pydantic import Field

from ..client import AsyncClient
from ..errors import InvalidArgumentError, SharedCtxError
from ..loop_clients import LoopClients
from ..tokens import TokenCounter
from ..types import FitResult, StrategyName
from .models import (
    DeleteResult,
    EntryResult,
    FitFilters,
    FitOutput,
    KeysResult,
    KindName,
    PutResult,
    StatsResult,
)
from .render import Reserved, fit_text, reserve, widened

# Fits asked for one call of the tool: the first, and wider ones while slots were too few.
_WIDEN_TRIES = 3

P = ParamSpec("P")
R = TypeVar("R")

Namespace = Annotated[
    str, Field(description="the shared namespace, e.g. 'team-a/session-42'", min_length=1)
]
Key = Annotated[str, Field(description="the entry's key, e.g. 'notes/plan' or 'tool/pytest#3'")]


def tool_errors(method: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Failed calls as MCP tool errors: "<gRPC status>: <server message>"."""

    @functools.wraps(method)
    async def call(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await method(*args, **kwargs)
        except SharedCtxError as exc:
            code = exc.code_name("UNKNOWN")
            raise ToolError(f"{code}: {exc.message}") from None
        except ValueError as exc:  # a value the client refused before sending (a bad name)
            raise ToolError(f"INVALID_ARGUMENT: {exc}") from None

    return call


class Tools:
    """The tools, over one AsyncClient per event loop (grpc.aio channels belong to the loop
    they were made on), made by `connect` on first use."""

    def __init__(
        self, connect: Callable[[], AsyncClient], token_encoding: str = "o200k_base"
    ) -> None:
        self._clients = LoopClients(connect)
        # The server's encoding (its token_encoding): the headings count as it would count them.
        self._tokens = TokenCounter(token_encoding)

    def client(self) -> AsyncClient:
        """The client for the running loop."""
        return self._clients.get()

    async def close(self) -> None:
        """Close the clients' channels."""
        await self._clients.close()

    @tool_errors
    async def put(
        self,
        namespace: Namespace,
        key: Key,
        content: Annotated[str, Field(description="the text to store, as is")],
        kind: Annotated[
            KindName | None, Field(description="what it is; helps compression and fit")
        ] = None,
        ttl_seconds: Annotated[
            int, Field(ge=0, description="seconds until it expires; 0: the server's default")
        ] = 0,
        tags: Annotated[list[str], Field(description="free-form labels fit can filter on")] = [],  # noqa: B006
        importance: Annotated[
            float | None, Field(ge=0, le=1, description="how much it matters, 0 to 1")
        ] = None,
        thread: Annotated[
            str, Field(description="the conversation or task it belongs to; '' = default")
        ] = "",
    ) -> PutResult:
        """Store an entry (create or overwrite)."""
        entry = await self.client().put(
            namespace,
            key,
            content,
            kind=kind,
            ttl_seconds=ttl_seconds,
            tags=tuple(tags),
            importance=importance,
            thread=thread,
        )
        return PutResult.of(entry)

    @tool_errors
    async def get(
        self,
        namespace: Namespace,
        key: Key,
        full: Annotated[
            bool, Field(description="the original text instead of the compressed form")
        ] = False,
    ) -> Annotated[CallToolResult, EntryResult]:
        """One entry: its text, and its metadata as structured content."""
        entry = await self.client().get(namespace, key, full=full)
        return CallToolResult(
            content=[TextContent(text=entry.content)],
            structured_content=EntryResult.of(entry).model_dump(mode="json"),
        )

    @tool_errors
    async def keys(
        self,
        namespace: Namespace,
        prefix: Annotated[str, Field(description="only keys starting with this")] = "",
        limit: Annotated[int, Field(ge=1, le=1000, description="most keys to return")] = 100,
        cursor: Annotated[
            str, Field(description="the cursor a previous call returned, to go on from there")
        ] = "",
    ) -> KeysResult:
        """Live keys with a prefix, in byte order."""
        found, token = await self.client().keys_page(
            namespace, prefix, page_size=limit, page_token=cursor
        )
        return KeysResult(keys=found, more=bool(token), cursor=token)

    @tool_errors
    async def delete(self, namespace: Namespace, key: Key) -> DeleteResult:
        """Remove an entry."""
        return DeleteResult(deleted=await self.client().delete(namespace, key))

    @tool_errors
    async def fit(
        self,
        namespace: Namespace,
        query: Annotated[
            str, Field(description="what you are working on: the task or the user's message")
        ],
        budget_tokens: Annotated[
            int,
            Field(
                ge=1,
                le=2**63 - 1,
                description="most tokens the returned context may take, headings included",
            ),
        ],
        strategy: Annotated[
            StrategyName | None,
            Field(
                description="scored (default): best match by meaning, words, recency, errors, "
                "importance; relevant: whole conversation turns that share the query's words; "
                "recent: newest turns first"
            ),
        ] = None,
        filters: Annotated[
            FitFilters | None, Field(description="which entries may be considered")
        ] = None,
    ) -> Annotated[CallToolResult, FitOutput]:
        """The entries that best fill the budget for the query, as text and as data."""
        request = filters.as_request() if filters is not None else None
        asked = reserve(budget_tokens)
        result = await self._fit_once(namespace, query, budget_tokens, asked, strategy, request)
        for _ in range(_WIDEN_TRIES):
            # The slots were too few: entries were left out for them while the texts left
            # much of the budget (thirty short messages and a log whose excerpt ranked 7th).
            wider = widened(budget_tokens, asked, result.total_tokens)
            if not result.left_out_by_reason.get("max_entries") or wider is None:
                break
            asked = wider
            result = await self._fit_once(namespace, query, budget_tokens, asked, strategy, request)
        if asked.texts_budget < 1:  # the headings take the whole budget: nothing fits
            result = replace(result, entries=[], total_tokens=0)
        result, text = self._within(namespace, result, budget_tokens, asked.texts_budget)
        return CallToolResult(
            content=[TextContent(text=text)],
            structured_content=FitOutput.of(result, budget_tokens).model_dump(mode="json"),
        )

    def _within(
        self, namespace: str, result: FitResult, budget_tokens: int, texts_budget: int
    ) -> tuple[FitResult, str]:
        """The result and its text, the weakest entries left out while the text (headings
        and summary counted) is over `budget_tokens`: the headings were only reserved for
        (a long key, an excerpt of many ranges take more). InvalidArgumentError when even
        the summary is over: a text over the budget is no answer."""
        text = fit_text(namespace, result, budget_tokens, texts_budget)
        used = self._tokens.count(text)
        while used > budget_tokens and result.entries:
            weakest = min(result.entries, key=lambda e: (e.score, -e.rank))
            kept = [e for e in result.entries if e is not weakest]
            total = sum(e.tokens for e in kept)
            result = replace(result, entries=kept, total_tokens=total)
            text = fit_text(namespace, result, budget_tokens, texts_budget)
            used = self._tokens.count(text)
        if used > budget_tokens:
            raise InvalidArgumentError(
                f"budget_tokens: {budget_tokens} cannot hold even the summary line ({used} "
                "tokens); ask with a larger budget_tokens",
                grpc.StatusCode.INVALID_ARGUMENT,
            )
        return result, text

    async def _fit_once(
        self,
        namespace: str,
        query: str,
        budget_tokens: int,
        asked: Reserved,
        strategy: StrategyName | None,
        filters: Any,
    ) -> FitResult:
        try:
            return await self.client().fit(
                namespace,
                query,
                max(1, asked.texts_budget),
                strategy=strategy,
                filters=filters,
                include_content=True,
                max_entries=asked.most,
                keep_recent=asked.keep_recent,
            )
        except SharedCtxError as exc:
            if "budget" not in exc.message:
                raise
            # The server's message names the budget it was sent, not the caller's.
            raise SharedCtxError(
                f"budget_tokens: {budget_tokens} is more than the server takes once headings "
                f"are set aside ({asked.texts_budget} tokens of text: {exc.message})",
                exc.code,
            ) from None

    @tool_errors
    async def stats(self, namespace: Namespace) -> StatsResult:
        """Totals over the namespace's live entries."""
        return StatsResult.of(await self.client().stats(namespace))


def pinned(method: Callable[..., Awaitable[Any]], namespace: str) -> Callable[..., Any]:
    """`method` with its namespace fixed: the same tool without the `namespace` argument."""
    import inspect

    signature = inspect.signature(method, eval_str=True)

    @functools.wraps(method)
    async def tool(**kwargs: Any) -> Any:
        return await method(namespace=namespace, **kwargs)

    del tool.__wrapped__  # inspect would follow it back to the full signature
    params = [p for p in signature.parameters.values() if p.name != "namespace"]
    tool.__signature__ = signature.replace(parameters=params)  # type: ignore[attr-defined]
    return tool
