"""OAuth for MCP clients, wired through django-oauth-toolkit.

The toolkit is the authorisation server: metadata (RFC 8414), dynamic registration
(RFC 7591), client ID metadata documents, PKCE, resource indicators (RFC 8707) and ``iss``
(RFC 9207) are its own. This package adds what is specific to an MCP endpoint:

- :func:`provider_settings`: the toolkit's settings for MCP clients, merged with a host's;
- :mod:`~mcp_endpoint.oauth.metadata`: the protected resource metadata of each endpoint
  (RFC 9728), and the server metadata at the URLs clients try;
- :mod:`~mcp_endpoint.oauth.registration`: limits on anonymous registration, and redirect
  URIs that are stored as they were checked;
- :mod:`~mcp_endpoint.oauth.validators`: tokens of a replayed code revoked;
- :mod:`~mcp_endpoint.oauth.views`: the sign-in, consent and connected-clients pages;
- :mod:`~mcp_endpoint.oauth.urls`: the URLs, with and without the final slash;
- :mod:`~mcp_endpoint.oauth.checks`: the set-up checked at start-up;
- :mod:`~mcp_endpoint.oauth.admin`: the toolkit's admin, showing how clients registered
  and what each token is bound to.
"""

from __future__ import annotations

from mcp_endpoint.oauth.provider import provider_settings

__all__ = ["provider_settings"]
