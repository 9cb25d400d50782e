"""Bad input: INVALID_ARGUMENT (RESOURCE_EXHAUSTED for limits) naming the rule; nothing written."""

from __future__ import annotations

import base64
from typing import Any

import grpc
import pytest
from sharedctx import AsyncClient, InvalidArgumentError, ResourceExhaustedError, SharedCtxError
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx_server.server import RunningServer
from sharedctx_server.settings import Limits, Settings
from sharedctx_server.tokens import TokenCounter

from .support.servers import serving

NS = "team-a/session-42"


async def assert_nothing_written(client: AsyncClient, namespace: str = NS) -> None:
    assert [k async for k in client.keys(namespace)] == []
    assert (await client.stats(namespace)).entries == 0


BAD_PUTS: list[tuple[str, dict[str, Any], str]] = [
    ("empty namespace", {"namespace": ""}, "namespace: is required"),
    ("namespace with a space", {"namespace": "team a"}, "namespace: may only hold"),
    ("namespace with a brace", {"namespace": "team{a}"}, "namespace: may only hold"),
    ("namespace too long", {"namespace": "n" * 129}, "at most 128"),
    ("empty key", {"key": ""}, "key: is required"),
    ("key with a newline", {"key": "a\nb"}, "control characters"),
    ("key with NUL", {"key": "a\x00b"}, "control characters"),
    ("key too long", {"key": "k" * 513}, "at most 512"),
    ("multibyte key too long", {"key": "é" * 257}, "514 bytes"),
    ("negative ttl", {"ttl_seconds": -1}, "ttl_seconds: must be >= 0"),
    ("importance above 1", {"importance": 1.5}, "importance: must be between 0 and 1"),
    ("importance NaN", {"importance": float("nan")}, "importance"),
    ("negative if_version", {"if_version": -2}, "if_version: must be >= 0"),
    ("unknown kind", {"kind": 42}, "kind: unknown value 42"),
    ("role with control char", {"role": "us\ter"}, "role: may not contain"),
    ("too many tags", {"tags": [f"t{i}" for i in range(65)]}, "at most 64"),
    ("empty tag", {"tags": ["ok", ""]}, "tags[1]: is empty"),
    ("tag too long", {"tags": ["t" * 257]}, "tags[0]: is 257 bytes; at most 256"),
    ("empty compressed form", {"compressed": ""}, "compressed: is empty while the content"),
]


@pytest.mark.parametrize(("case", "fields", "message"), BAD_PUTS, ids=[c[0] for c in BAD_PUTS])
async def test_bad_put_is_invalid_argument_and_writes_nothing(
    server: RunningServer, client: AsyncClient, case: str, fields: dict[str, Any], message: str
) -> None:
    req = pb.PutRequest(namespace=NS, key="k", content="text")
    for name, value in fields.items():
        if name == "tags":
            req.tags.extend(value)
        else:
            setattr(req, name, value)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Put(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert message in (info.value.details() or "")
    await assert_nothing_written(client)


async def test_invalid_argument_names_the_field_for_the_client(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        await client.put(NS, "bad\x07key", "x")
    assert info.value.field == "key"


async def test_oversized_content_is_resource_exhausted_naming_the_limit(
    settings: Settings, token_counter: TokenCounter
) -> None:
    small = Limits(max_content_bytes=1000)
    async with serving(settings, token_counter, limits=small) as (_, client):
        with pytest.raises(ResourceExhaustedError) as info:
            await client.put(NS, "big", "x" * 1001)
        assert info.value.limit == "max_content_bytes"
        assert "1001 bytes" in info.value.message
        await client.put(NS, "fits", "x" * 1000)
        assert [k async for k in client.keys(NS)] == ["fits"]


async def test_oversized_batch_is_resource_exhausted_and_writes_nothing(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_batch_entries=3)) as (_, c):
        with pytest.raises(ResourceExhaustedError) as info:
            await c.put_many(NS, [{"key": f"k{i}", "content": "x"} for i in range(4)])
        assert info.value.limit == "max_batch_entries"
        await assert_nothing_written(c)


async def test_a_put_is_bounded_per_form_not_by_the_batch_limit(
    settings: Settings, token_counter: TokenCounter
) -> None:
    # max_batch_bytes is about PutMany: a Put whose forms are each within max_content_bytes
    # goes in, even when the two together exceed it; the same as a batch does not.
    small = Limits(max_content_bytes=2000, max_batch_bytes=3000)
    async with serving(settings, token_counter, limits=small) as (_, c):
        await c.put(NS, "k", "x" * 2000, compressed="y" * 1500)
        with pytest.raises(ResourceExhaustedError) as info:
            await c.put_many(NS, [{"key": "b", "content": "x" * 2000, "compressed": "y" * 1500}])
        assert info.value.limit == "max_batch_bytes"
        assert [k async for k in c.keys(NS)] == ["k"]


async def test_put_many_rejects_a_bad_item_and_writes_none(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match=r"entries\[1\]\.key"):
        await client.put_many(NS, [{"key": "good", "content": "x"}, {"key": "", "content": "y"}])
    await assert_nothing_written(client)


@pytest.mark.parametrize(
    ("bad", "field"),
    [
        ({"key": ""}, "entries[0].key"),
        ({"importance": 2.0}, "entries[0].importance"),
        ({"ttl_seconds": -1}, "entries[0].ttl_seconds"),
        ({"content": "a\x00b"}, "entries[0].content"),
    ],
)
async def test_put_many_names_the_entry_even_when_it_is_the_only_one(
    client: AsyncClient, bad: dict[str, object], field: str
) -> None:
    """A one-entry PutMany is still a batch: its errors say which entry, like any other."""
    with pytest.raises(InvalidArgumentError) as info:
        await client.put_many(NS, [{"key": "k", "content": "x", **bad}])
    assert info.value.field == field
    await assert_nothing_written(client)


async def test_put_many_names_the_entry_of_a_limit_it_breaks(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_content_bytes=10)) as (_, c):
        with pytest.raises(ResourceExhaustedError, match=r"entries\[1\]") as info:
            await c.put_many(NS, [{"key": "a", "content": "x"}, {"key": "b", "content": "y" * 11}])
        assert info.value.limit == "max_content_bytes"
        await assert_nothing_written(c)


async def test_a_query_over_the_size_limit_is_told_to_be_shorter(
    settings: Settings, token_counter: TokenCounter
) -> None:
    async with serving(settings, token_counter, limits=Limits(max_content_bytes=10)) as (_, c):
        with pytest.raises(ResourceExhaustedError, match=r"query is 11 bytes.*shorten the query"):
            await c.fit(NS, "q" * 11, 100)


async def test_put_many_rejects_duplicate_keys(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match="appears twice"):
        await client.put_many(NS, [{"key": "a", "content": "x"}, {"key": "a", "content": "y"}])
    await assert_nothing_written(client)


async def test_put_many_rejects_an_item_of_another_namespace(
    server: RunningServer, client: AsyncClient
) -> None:
    req = pb.PutManyRequest(
        namespace=NS, entries=[pb.PutRequest(namespace="elsewhere", key="a", content="x")]
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).PutMany(req)
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    await assert_nothing_written(client)


async def test_empty_put_many_is_invalid(client: AsyncClient) -> None:
    with pytest.raises(InvalidArgumentError, match="at least one"):
        await client.put_many(NS, [])


@pytest.mark.parametrize(
    ("fields", "field"),
    [({"page_token": "%%%"}, "page_token"), ({"page_size": -1}, "page_size")],
)
async def test_keys_rejects_bad_paging(
    server: RunningServer, fields: dict[str, Any], field: str
) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await pb_grpc.SharedContextStub(channel).Keys(pb.KeysRequest(namespace=NS, **fields))
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (info.value.details() or "").startswith(field)


async def test_bad_namespace_on_reads_is_invalid(client: AsyncClient) -> None:
    for call in (
        client.get("", "k"),
        client.stats("bad ns"),
        client.clear("x" * 200),
        client.delete("a b", "k"),
    ):
        with pytest.raises(InvalidArgumentError, match="namespace"):
            await call


async def test_required_namespace_and_key_messages_give_the_configured_limits(
    settings: Settings, token_counter: TokenCounter
) -> None:
    limits = Limits(max_namespace_chars=40, max_key_bytes=100)
    async with serving(settings, token_counter, limits=limits) as (_, c):
        with pytest.raises(InvalidArgumentError, match=r"1-40 characters") as info:
            await c.put("", "k", "x")
        assert info.value.field == "namespace"
        with pytest.raises(InvalidArgumentError, match=r"1-100 bytes") as info:
            await c.put(NS, "", "x")
        assert info.value.field == "key"


async def test_a_broken_limit_says_which_server_setting_sets_it(
    settings: Settings, token_counter: TokenCounter
) -> None:
    limits = Limits(max_key_bytes=16, max_tags=2, max_ttl_seconds=100, max_budget_tokens=500)
    async with serving(settings, token_counter, limits=limits) as (_, c):
        calls = {
            "--max-key-bytes / SHAREDCTX_MAX_KEY_BYTES": c.put(NS, "k" * 17, "x"),
            "--max-tags / SHAREDCTX_MAX_TAGS": c.put(NS, "k", "x", tags=("a", "b", "c")),
            "--max-ttl-seconds / SHAREDCTX_MAX_TTL_SECONDS": c.put(NS, "k", "x", ttl_seconds=101),
            "--max-budget-tokens / SHAREDCTX_MAX_BUDGET_TOKENS": c.fit(NS, "q", 501),
        }
        for names, call in calls.items():
            with pytest.raises(SharedCtxError) as info:
                await call
            assert info.value.message.endswith(f"(the server's {names})"), info.value.message
        await assert_nothing_written(c)


async def _refusal(server: RunningServer, method: str, request: Any) -> grpc.aio.AioRpcError:
    """The error a raw stub call gets (or, for a stream, its first read)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        call = getattr(pb_grpc.SharedContextStub(channel), method)(request, timeout=10)
        with pytest.raises(grpc.aio.AioRpcError) as info:
            if method in ("Watch", "Reembed"):
                await call.read()
            else:
                await call
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    return info.value


def _fit(**fields: Any) -> pb.FitRequest:
    return pb.FitRequest(namespace=NS, query="q", budget_tokens=100, **fields)


BAD_FITS: list[tuple[str, pb.FitRequest, str]] = [
    ("negative weight", _fit(weights=pb.Weights(recency=-1.0)), "weights.recency"),
    ("NaN weight", _fit(weights=pb.Weights(token_density=float("nan"))), "weights.token_density"),
    ("unknown included kind", _fit(filters=pb.Filters(include_kinds=[1, 42])),
     "filters.include_kinds[1]"),
    ("unknown excluded kind", _fit(filters=pb.Filters(exclude_kinds=[7])),
     "filters.exclude_kinds[0]"),
    ("negative keep_recent", _fit(keep_recent=-1), "keep_recent"),
    ("negative max_entries", _fit(max_entries=-1), "max_entries"),
    ("negative compress_threshold", _fit(compress_threshold=-5), "compress_threshold"),
    ("infinite decay rate", _fit(recency_decay_rate=float("inf")), "recency_decay_rate"),
    ("NaN min_score", _fit(min_score=float("nan")), "min_score"),
    ("unknown preset", _fit(preset="nope"), "preset"),
    ("a reply's form", _fit(form=pb.FORM_EXCERPT), "form"),
]  # fmt: skip


@pytest.mark.parametrize(("case", "request_", "field"), BAD_FITS, ids=[c[0] for c in BAD_FITS])
async def test_bad_fit_names_the_exact_field(
    server: RunningServer, case: str, request_: pb.FitRequest, field: str
) -> None:
    error = await _refusal(server, "Fit", request_)
    assert (error.details() or "").startswith(f"{field}: ")


async def test_a_page_token_of_another_prefix_is_refused_naming_it(
    server: RunningServer, client: AsyncClient
) -> None:
    await client.put_many(NS, [{"key": k, "content": "x"} for k in ("a1", "a2", "b1")])
    async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.SharedContextStub(channel)
        page = await stub.Keys(pb.KeysRequest(namespace=NS, prefix="a", page_size=1))
    assert page.next_page_token
    error = await _refusal(
        server, "Keys", pb.KeysRequest(namespace=NS, prefix="b", page_token=page.next_page_token)
    )
    assert (error.details() or "") == "page_token: belongs to a listing with a different prefix"
    error = await _refusal(server, "Namespaces", pb.NamespacesRequest(page_token="%%%"))
    assert (error.details() or "") == "page_token: is not a token returned by Namespaces"
    # Another namespace's token, a Keys token for Namespaces, a token made up: resumed from,
    # each had skipped names without a word.
    refused = "page_token: is not a token returned by Keys for this namespace"
    for token in (page.next_page_token, base64.urlsafe_b64encode(b"a1").decode(), "A" * 1000):
        other = pb.KeysRequest(namespace="team-b/other", page_token=token)
        assert ((await _refusal(server, "Keys", other)).details() or "") == refused
    error = await _refusal(
        server, "Namespaces", pb.NamespacesRequest(page_token=page.next_page_token)
    )
    assert (error.details() or "") == "page_token: is not a token returned by Namespaces"


async def test_a_megabyte_of_blanks_is_stored_and_counted(client: AsyncClient) -> None:
    # tiktoken's stack overflowed on a run of about a million spaces; the panic was no
    # Exception, and the Put got no answer at all.
    for blank in (" ", "\t"):
        content = blank * ((1 << 20) - 1) + "x"
        stamp = await client.put(NS, f"blank{ord(blank)}", content)
        assert stamp.version == 1
        got = await client.get(NS, f"blank{ord(blank)}", full=True)
        assert got.content == content and got.original_tokens > 1000


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        "1-1~x",
        "1~1",
        # Digits, but not an id Redis takes: past 64 bits, or not ASCII.
        "99999999999999999999999-0~1",
        "1-99999999999999999999999~1",
        "\u0663-0~1",
        "\u00b2-0~1",
    ],
)
async def test_a_bad_resume_token_is_refused_naming_it(server: RunningServer, token: str) -> None:
    error = await _refusal(server, "Watch", pb.WatchRequest(namespace=NS, resume_token=token))
    assert (error.details() or "") == "resume_token: is not a token returned by Watch"


@pytest.mark.parametrize("method", ["Watch", "Reembed", "Stats", "Clear"])
async def test_streams_and_namespace_calls_check_the_namespace(
    server: RunningServer, method: str
) -> None:
    request = getattr(pb, f"{method}Request")(namespace="bad ns")
    error = await _refusal(server, method, request)
    assert (error.details() or "").startswith("namespace: may only hold")


async def test_a_message_over_grpcs_size_limit_says_what_to_do(
    settings: Settings, token_counter: TokenCounter
) -> None:
    # Small limits: the server lets messages of about 1 MiB through; this one is larger, and
    # gRPC refuses it before any handler sees it.
    small = Limits(max_content_bytes=1000, max_batch_bytes=2000)
    async with serving(settings, token_counter, limits=small) as (_, c):
        with pytest.raises(ResourceExhaustedError, match="put less per call") as info:
            await c.put(NS, "big", "x" * (2 << 20))
        assert "max_content_bytes" in str(info.value) and "2,097,1" in str(info.value)
        await assert_nothing_written(c)
