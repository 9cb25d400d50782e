"""The SharedContext gRPC servicer: parse, call the store, build the reply. Nothing more."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
from sharedctx.v1 import sharedctx_pb2 as pb
from sharedctx.v1 import sharedctx_pb2_grpc as pb_grpc

from ..errors import InvalidArgument
from ..services.entry_embeddings import EntryEmbeddings
from ..services.fitting import FitService
from ..services.watch import ChangeFeed
from ..services.writes import WritePath
from ..settings import Settings
from ..state.store import Store
from . import validation as V
from .convert import entry_to_proto, ms_to_timestamp, stored_to_proto
from .status import maps_errors, maps_stream_errors

_OPS = {
    "put": pb.ChangeEvent.OP_PUT,
    "delete": pb.ChangeEvent.OP_DELETE,
    "expire": pb.ChangeEvent.OP_EXPIRE,
    "clear": pb.ChangeEvent.OP_CLEAR,
    "embed": pb.ChangeEvent.OP_EMBED,
    "evict": pb.ChangeEvent.OP_EVICT,
}


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

    def _ns(self, namespace: str) -> str:
        return V.check_namespace(namespace, self._limits)

    @maps_errors
    async def Put(
        self, request: pb.PutRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutResponse:
        ns = self._ns(request.namespace)
        (entry,), (stamp,) = await self._writes.write(ns, [request], batch=False)
        return pb.PutResponse(entry=entry_to_proto(entry.key, stamp, entry.meta))

    @maps_errors
    async def PutMany(
        self, request: pb.PutManyRequest, context: grpc.aio.ServicerContext
    ) -> pb.PutManyResponse:
        ns = self._ns(request.namespace)
        for i, item in enumerate(request.entries):
            if item.namespace and item.namespace != ns:
                raise InvalidArgument(
                    f"entries[{i}].namespace", "must be empty or equal to the request's namespace"
                )
        entries, stamps = await self._writes.write(ns, request.entries, batch=True)
        return pb.PutManyResponse(
            entries=[entry_to_proto(e.key, s, e.meta) for e, s in zip(entries, stamps, strict=True)]
        )

    @maps_errors
    async def Get(
        self, request: pb.GetRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetResponse:
        ns = self._ns(request.namespace)
        key = V.check_key(request.key, self._limits)
        return pb.GetResponse(entry=stored_to_proto(await self._store.get(ns, key, request.full)))

    @maps_errors
    async def GetMany(
        self, request: pb.GetManyRequest, context: grpc.aio.ServicerContext
    ) -> pb.GetManyResponse:
        ns = self._ns(request.namespace)
        V.check_batch(len(request.keys), self._limits, "keys")
        keys = [V.check_key(k, self._limits, f"keys[{i}]") for i, k in enumerate(request.keys)]
        found = await self._store.get_many(ns, keys, request.full)
        return pb.GetManyResponse(
            entries=[stored_to_proto(e) for e in found if e is not None],
            missing=[k for k, e in zip(keys, found, strict=True) if e is None],
        )

    @maps_errors
    async def Keys(
        self, request: pb.KeysRequest, context: grpc.aio.ServicerContext
    ) -> pb.KeysResponse:
        ns = self._ns(request.namespace)
        if request.prefix:
            V.check_key(request.prefix, self._limits, "prefix")
        size = request.page_size or self._limits.default_page_size
        if size < 0:
            raise InvalidArgument("page_size", f"must be >= 0 (0 = default); got {size}")
        size = min(size, self._limits.max_page_size)
        keys, token = await self._store.keys(ns, request.prefix, size, request.page_token)
        return pb.KeysResponse(keys=keys, next_page_token=token)

    @maps_errors
    async def Delete(
        self, request: pb.DeleteRequest, context: grpc.aio.ServicerContext
    ) -> pb.DeleteResponse:
        ns = self._ns(request.namespace)
        key = V.check_key(request.key, self._limits)
        if_version = V.check_if_version(
            request.if_version if request.HasField("if_version") else None
        )
        return pb.DeleteResponse(deleted=await self._store.delete(ns, key, if_version))

    @maps_errors
    async def Stats(
        self, request: pb.StatsRequest, context: grpc.aio.ServicerContext
    ) -> pb.StatsResponse:
        stats = await self._store.stats(self._ns(request.namespace))
        return pb.StatsResponse(
            entries=stats.entries,
            original_tokens=stats.original_tokens,
            compressed_tokens=stats.compressed_tokens,
            tokens_saved=stats.tokens_saved,
            savings_percent=stats.savings_percent,
            bytes_stored=stats.bytes_stored,
        )

    @maps_errors
    async def Clear(
        self, request: pb.ClearRequest, context: grpc.aio.ServicerContext
    ) -> pb.ClearResponse:
        return pb.ClearResponse(deleted=await self._store.clear(self._ns(request.namespace)))

    @maps_errors
    async def Fit(
        self, request: pb.FitRequest, context: grpc.aio.ServicerContext
    ) -> pb.FitResponse:
        return await self._fits.fit(request)

    @maps_stream_errors
    async def Watch(
        self, request: pb.WatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ChangeEvent]:
        ns = self._ns(request.namespace)
        async for change in self._feed.follow(ns, request.resume_token):
            yield pb.ChangeEvent(
                op=_OPS.get(change.op, pb.ChangeEvent.OP_UNSPECIFIED),
                key=change.key,
                version=change.version,
                namespace_version=change.namespace_version,
                time=ms_to_timestamp(change.time_ms),
                resume_token=self._feed.token(change),
            )

    @maps_stream_errors
    async def Reembed(
        self, request: pb.ReembedRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[pb.ReembedProgress]:
        ns = self._ns(request.namespace)
        async for step in self._embeddings.reembed(ns, request.force):
            yield pb.ReembedProgress(done=step.done, total=step.total, computed=step.computed)
