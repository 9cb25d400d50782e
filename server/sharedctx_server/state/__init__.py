"""State: the Redis store (the only module that knows keys), its Lua scripts and connection,
quotas, the embedded Valkey, and each replica's in-memory namespace cache for Fit."""
