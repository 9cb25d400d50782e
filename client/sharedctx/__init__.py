"""sharedctx client: put context entries, fit the best of them into a token budget."""
