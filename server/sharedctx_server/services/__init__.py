"""Services: the write path, the Fit service and Watch, each over the state layer and the
engines (fit, compress, embedding, segment)."""
