"""Pages for a product's signed-in users: connect an AI client, personal API keys, and the
applications they allowed. A host mounts them where its account pages live::

    path("account/ai/", include("mcp_endpoint.account.urls")),
"""
