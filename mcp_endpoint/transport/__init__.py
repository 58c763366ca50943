"""The pieces of the HTTP view, one concern each; :class:`mcp_endpoint.views.MCPView` puts
them together.

``base`` the view's policies and the body read once; ``origins`` which browser origins may
call; ``credentials`` the credential and the 401 challenge; ``streams`` a session's GET and
DELETE, resumed streams and ``subscriptions/listen``; ``batches`` JSON-RPC batches of the
2025 revisions. None of them knows DRF viewsets; the rules they apply that are not HTTP's
live in :mod:`mcp_endpoint.protocol`.
"""
