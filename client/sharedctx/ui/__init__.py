"""The web inspector, `sharedctx ui`: a small web app that shows what a sharedctx server holds
(namespaces, entries, both forms of an entry) and why a Fit chose what it chose.

It is a client like any other: it talks to the server over gRPC only (AsyncClient), and never
imports the server package. Its web stack (Starlette, uvicorn, Jinja2) comes with the `ui`
extra; `command.py` loads without it and says how to install it.
"""
