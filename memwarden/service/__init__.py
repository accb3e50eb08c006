"""The service front end: one core (core.py) behind MCP (mcp_server.py) and REST (http.py).

Nothing here is imported by the CLI's other commands or the hooks: `memwarden serve`,
`memwarden mcp` and `memwarden token` load it on use.
"""
