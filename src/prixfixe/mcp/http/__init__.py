"""`prixfixe serve --http`: the MCP server over streamable HTTP (the SDK's app, on uvicorn).

`settings.py` turns `[http]` config and flags into checked settings (and refuses to serve off
loopback without a token); `guard.py` is the ASGI layer in front of the SDK's app (Host and
Origin checks against DNS rebinding, the bearer token); `sessions.py` makes room at the session
cap by ending the session idle longest; `serve.py` runs it until a signal.
"""
