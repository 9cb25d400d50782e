"""The gRPC edge: the servicer, interceptors, status mapping, logs, metrics and tracing.

The only layer that sees protobuf messages: requests become validated domain values here and
replies are built here; everything below takes and returns domain types.
"""
