"""The Lua scripts, loaded once from lua/ and run by SHA (EVALSHA, falling back to EVAL)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

from redis.exceptions import NoScriptError

# Scripts that write a namespace get lib.lua's helpers prepended (Redis has no script includes).
_WITH_LIB = ("put_many", "delete", "touch", "clear_chunk", "sweep", "set_embeddings")
_PLAIN = ("get_many", "keys_page", "emb_missing", "claim_due")


@dataclass(frozen=True)
class Script:
    """One Lua script and its SHA1; works on plain Redis and Redis Cluster clients alike."""

    name: str
    source: str
    sha: str

    async def __call__(self, redis: Any, keys: list[str], args: list[Any]) -> Any:
        """Run by SHA; on NOSCRIPT (a restarted or failed-over server) send the source once."""
        try:
            return await redis.evalsha(self.sha, len(keys), *keys, *args)
        except NoScriptError:
            return await redis.eval(self.source, len(keys), *keys, *args)


def _read(name: str) -> str:
    return files("sharedctx_server.state").joinpath("lua", f"{name}.lua").read_text("utf-8")


def _make(name: str, source: str) -> Script:
    return Script(name, source, hashlib.sha1(source.encode("utf-8")).hexdigest())


@dataclass(frozen=True)
class Scripts:
    """Every script the store runs."""

    put_many: Script
    delete: Script
    touch: Script
    clear_chunk: Script
    sweep: Script
    set_embeddings: Script
    get_many: Script
    keys_page: Script
    emb_missing: Script
    claim_due: Script

    @classmethod
    def load(cls) -> Scripts:
        """Read the scripts from the package."""
        lib = _read("lib")
        made = {name: _make(name, lib + "\n" + _read(name)) for name in _WITH_LIB}
        made.update({name: _make(name, _read(name)) for name in _PLAIN})
        return cls(**made)
