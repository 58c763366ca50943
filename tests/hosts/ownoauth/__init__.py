"""A product that ran django-oauth-toolkit before it added the endpoint: PKCE optional for
its own clients, scopes of its own, a confidential partner client on the code flow without
PKCE, and a REST API behind the toolkit's own class and ``TokenHasScope``
(:mod:`.oauth_settings`). Adding MCP must leave all of that as it was."""
