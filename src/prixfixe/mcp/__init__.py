"""The MCP layer: the low-level server, stdio and streamable HTTP."""
