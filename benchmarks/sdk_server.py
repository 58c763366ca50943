"""The official Python SDK's stateless JSON server with one trivial tool: the bench's peer.

Bench-only (not part of the app): ``benchmarks/run.py`` serves ``app`` under uvicorn with
one worker and drives it with the same ``wrk`` script and body as our ``add`` tool, so the
two rates are comparable. Uses ``mcp`` 2.x (``MCPServer``; ``FastMCP`` is gone).
"""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench-sdk")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


# Stateless and plain JSON, as our endpoint answers: no session, no SSE.
app = server.streamable_http_app(json_response=True, stateless_http=True)
