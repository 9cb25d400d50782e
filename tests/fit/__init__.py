"""Tests of the pure Fit library (sharedctx_server.fit)."""
