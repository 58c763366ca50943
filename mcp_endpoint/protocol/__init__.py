"""JSON-RPC and MCP: parsed JSON in, JSON-ready dicts out.

Nothing here imports ``django.http``: the transport (``mcp_endpoint.views``) turns HTTP into
messages and answers back into HTTP, and this package never sees either.
"""
