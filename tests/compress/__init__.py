"""Tests of the content-aware compressors (sharedctx_server.compress)."""
