"""sharedctx server: the gRPC service, the Redis store and the Fit engine."""
