"""The browsing pages: namespaces, a namespace's entries (and single rows for live updates),
one entry in both forms, and an entry's raw text."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlencode

import grpc
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response

from ..client import AsyncClient
from ..errors import SharedCtxError
from ..types import Entry
from . import listing
from .config import UiConfig
from .fmt import namespace_of
from .omissions import mark

__all__ = ["entry", "http_status", "namespace", "namespaces", "raw", "render", "row"]

NAMESPACES_PER_PAGE = 100

# What a failed call means for the page: the server's answer, as an HTTP status.
_STATUS = {
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 400,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 403,
    grpc.StatusCode.UNAVAILABLE: 502,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
}


def http_status(exc: SharedCtxError) -> int:
    """The HTTP status of a page whose gRPC call failed with `exc` (502: the server's fault)."""
    return _STATUS.get(exc.code, 502) if exc.code is not None else 502


def client_of(request: Request) -> AsyncClient:
    """The app's gRPC client."""
    client: AsyncClient = request.app.state.client
    return client


def number(request: Request, name: str, default: int) -> int:
    """A positive whole number from the query string (the default when absent or bad)."""
    raw = request.query_params.get(name, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


def render(request: Request, template: str, context: dict[str, Any], status: int = 200) -> Response:
    """A page from `template`, with what every page shows (the server, sign-out)."""
    config: UiConfig = request.app.state.config
    params = dict(request.query_params)

    def link(**changes: Any) -> str:
        """This page's query string with `changes` (None removes a parameter)."""
        merged = {**params, **changes}
        kept = {k: v for k, v in merged.items() if v is not None and v != ""}
        return "?" + urlencode(kept) if kept else "?"

    base = {"target": config.target, "login_required": config.login_required, "link": link}
    response: Response = request.app.state.templates.TemplateResponse(
        request, template, {**base, **context}, status_code=status
    )
    response.headers["cache-control"] = "no-store"
    return response


async def namespaces(request: Request) -> Response:
    """Every namespace with live entries (those the token may read), with totals."""
    prefix = request.query_params.get("prefix", "")
    found = [n async for n in client_of(request).namespaces(prefix, page_size=1000)]
    pages = max(1, -(-len(found) // NAMESPACES_PER_PAGE))
    page = min(number(request, "page", 1), pages)
    at = (page - 1) * NAMESPACES_PER_PAGE
    totals = {
        "entries": sum(n.entries for n in found),
        "full": sum(n.original_tokens for n in found),
        "compressed": sum(n.compressed_tokens for n in found),
    }
    return render(
        request,
        "namespaces.html",
        {
            "title": "Namespaces",
            "prefix": prefix,
            "rows": found[at : at + NAMESPACES_PER_PAGE],
            "count": len(found),
            "totals": totals,
            "page": page,
            "pages": pages,
        },
    )


async def namespace(request: Request) -> Response:
    """A namespace's entries: a sortable, filterable, paged table that follows Watch."""
    ns = namespace_of(request.path_params["namespace"])
    config: UiConfig = request.app.state.config
    client = client_of(request)
    order = request.query_params.get("order", "")
    prefix = request.query_params.get("prefix", "")
    stats, rows = await asyncio.gather(
        client.stats(ns),
        listing.load(
            client,
            ns,
            prefix=prefix,
            sort=request.query_params.get("sort", "time"),
            descending={"asc": False, "desc": True}.get(order),
            page=number(request, "page", 1),
            page_size=config.page_size,
            sort_limit=config.sort_limit,
        ),
    )
    return render(
        request,
        "namespace.html",
        {
            "title": ns,
            "ns": ns,
            "prefix": prefix,
            "stats": stats,
            "listing": rows,
            "columns": listing.COLUMNS,
        },
    )


async def row(request: Request) -> Response:
    """One entry's table row, for the live updates of a namespace page (404 once it is gone)."""
    ns = namespace_of(request.path_params["namespace"])
    key = request.query_params.get("key", "")
    found = await client_of(request).get_many(ns, [key])
    if key not in found:
        return PlainTextResponse("gone", status_code=404)
    return render(request, "_row.html", {"ns": ns, "e": found[key]})


async def entry(request: Request) -> Response:
    """One entry: both forms side by side, what compression left out, metadata, version."""
    ns = namespace_of(request.path_params["namespace"])
    key = request.query_params.get("key", "")
    client = client_of(request)
    full, compressed = await asyncio.gather(
        client.get(ns, key, full=True), client.get(ns, key, full=False)
    )
    return render(
        request,
        "entry.html",
        {
            "title": key,
            "ns": ns,
            "e": full,
            "same": full.content == compressed.content,
            "full": mark(full.content, find=False),
            "compressed": mark(compressed.content),
            "meta": _metadata(full),
        },
    )


def _metadata(e: Entry) -> list[tuple[str, str]]:
    """The entry's metadata as (name, value) rows, empty fields left out."""
    rows = [
        ("kind", e.kind),
        ("role", e.role),
        ("agent", e.agent_id),
        ("tool", e.tool_name),
        ("thread", e.thread),
        ("tags", ", ".join(e.tags)),
        ("importance", f"{e.importance:g}" if e.importance else ""),
        ("compressor", e.compressor),
        ("bytes", f"{e.original_bytes:,} full, {e.compressed_bytes:,} compressed"),
    ]
    return [(name, value) for name, value in rows if value]


async def raw(request: Request) -> Response:
    """An entry's text as plain text (`form=full` for the original)."""
    ns = namespace_of(request.path_params["namespace"])
    key = request.query_params.get("key", "")
    full = request.query_params.get("form", "compressed") == "full"
    found = await client_of(request).get(ns, key, full=full)
    return PlainTextResponse(found.content, headers={"cache-control": "no-store"})
