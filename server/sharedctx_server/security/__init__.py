"""Security: bearer tokens and JWTs (who may do what in which namespaces) and TLS."""
