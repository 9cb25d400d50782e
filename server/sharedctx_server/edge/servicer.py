"""The SharedContext gRPC servicer: each handler turns its request into a domain value
(edge.requests), calls one service or the store, and builds the reply (edge.replies)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc
from sharedctx.wire import RESUME_TOKEN_HEADER

from ..services.entry_embeddings import EntryEmbeddings
from ..services.fit_service import FitService
from ..services.watch import ChangeFeed
from ..services.write_path import WritePath
from ..settings import Settings
from ..state.store import Store
from . import replies, requests
from .interceptors import current_grant
from .status import maps_errors, maps_stream_errors


class SharedContextServicer(pb_grpc.SharedContextServicer):
    """Implements sharedctx.v1.SharedContext on a Store."""

    def __init__(
        self,
        store: Store,
        writes: WritePath,
        embeddings: EntryEmbeddings,
        fits: FitService,
        feed: ChangeFeed,
        settings: Settings,
    ) -> None:
        self._store = store
        self._writes = writes
        self._embeddings = embeddings
        self._fits = fits
        self._feed = feed
        self._settings = settings
        self._limits = settings.limits

    @maps_errors
    async def Put(
        self, request: pb.PutRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutResponse:
        (written,), (stamp,) = await self._writes.write(*requests.put(request, self._settings))
        return replies.put(written, stamp)

    @maps_errors
    async def PutMany(
        self, request: pb.PutManyRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutManyResponse:
        written, stamps = await self._writes.write(*requests.put_many(request, self._settings))
        return replies.put_many(written, stamps)

    @maps_errors
    async def Get(
        self, request: pb.GetRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetResponse:
        read = requests.get(request, self._limits)
        found = await self._store.get(read.namespace, read.keys[0], read.full)
        return replies.get(found)

    @maps_errors
    async def GetMany(
        self, request: pb.GetManyRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetManyResponse:
        read = requests.get_many(request, self._limits)
        found = await self._store.get_many(read.namespace, list(read.keys), read.full)
        return replies.get_many(read.keys, found)

    @maps_errors
    async def Keys(
        self, request: pb.KeysRequest, context: grpc.aio.ServicerContext
    ) -> pb.KeysResponse:
        page = requests.keys(request, self._limits)
        keys, token = await self._store.keys(
            page.namespace, page.prefix, page.page_size, page.after
        )
        return replies.keys(keys, token)

    @maps_errors
    async def Namespaces(
        self, request: pb.NamespacesRequest, context: grpc.aio.ServicerContext
    ) -> pb.NamespacesResponse:
        page = requests.namespaces(request, self._limits)
        grant = current_grant()  # with auth on, only the namespaces the caller may read
        found, token = await self._store.namespaces(page, grant.can_read if grant else None)
        return replies.namespaces(found, token)

    @maps_errors
    async def Delete(
        self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteResponse:
        removal = requests.delete(request, self._limits)
        deleted = await self._store.delete(removal.namespace, removal.key, removal.if_version)
        return replies.delete(deleted)

    @maps_errors
    async def Touch(
        self, request: pb.TouchRequest, context: grpc.aio.ServicerContext
    ) -> pb.TouchResponse:
        renewal = requests.touch(request, self._limits)
        found = await self._store.touch(renewal.namespace, renewal.keys)
        return replies.touch(renewal.keys, found)

    @maps_errors
    async def Stats(
        self, request: pb.StatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.StatsResponse:
        namespace = requests.stats(request, self._limits)
        return replies.stats(await self._store.stats(namespace))

    @maps_errors
    async def Clear(
        self, request: pb.ClearRequest, context: grpc.aio.ServicerContext
    ) -> pb.ClearResponse:
        namespace = requests.clear(request, self._limits)
        return replies.clear(await self._store.clear(namespace))

    @maps_errors
    async def Fit(
        self, request: pb.FitRequest, context: grpc.aio.ServicerContext
    ) -> pb.FitResponse:
        started = time.perf_counter()
        result = await self._fits.fit(requests.fit(request, self._settings))
        return replies.fit(result, (time.perf_counter() - started) * 1000.0)

    @maps_stream_errors
    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ChangeEvent]:
        following = requests.watch(request, self._limits)
        start = await self._feed.start(following.namespace, following.resume)
        # Sent before any change, so that a client whose stream breaks before the first change
        # can still resume without missing one (and knows when the watch has begun).
        await context.send_initial_metadata(((RESUME_TOKEN_HEADER, self._feed.start_token(start)),))
        changes = self._feed.follow(following.namespace, start, following.touches)
        async for change in changes:
            yield replies.change(change, self._feed.token(change))

    @maps_stream_errors
    async def Reembed(
        self, request: pb.ReembedRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ReembedProgress]:
        reembedding = requests.reembed(request, self._limits)
        async for step in self._embeddings.reembed(reembedding.namespace, reembedding.force):
            yield replies.reembed(step)
