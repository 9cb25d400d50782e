"""Token counting: the client package's (sharedctx.tokens), which `sharedctx mcp` shares."""

from __future__ import annotations

from sharedctx.tokens import SUPPORTED_ENCODINGS, TokenCounter, load_encoding

__all__ = ["SUPPORTED_ENCODINGS", "TokenCounter", "load_encoding"]
