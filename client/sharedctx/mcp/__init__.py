"""`sharedctx mcp`: an MCP server (official `mcp` SDK) in front of a running sharedctx.

command.py is the CLI command and needs only the standard library; server.py, tools.py and
models.py need the `mcp` extra (`pip install -e '.[mcp]'` in the sharedctx checkout).
"""
