"""LangGraph store backed by sharedctx: `SharedContextStore` (needs `sharedctx[langgraph]`)."""

from .store import SharedContextStore

__all__ = ["SharedContextStore"]
