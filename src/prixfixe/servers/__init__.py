"""MCP servers mounted behind the fixed menu: each `[servers.NAME]` is a facet whose tools
are searched, described and invoked through the discovery trio as `NAME.tool`, never listed
unless that facet is exposed. See `service.py` for how the parts fit.
"""
