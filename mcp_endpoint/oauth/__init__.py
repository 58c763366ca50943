"""OAuth for MCP clients, wired through django-oauth-toolkit.

The toolkit is the authorisation server: metadata (RFC 8414), dynamic registration
(RFC 7591), client ID metadata documents, PKCE, resource indicators (RFC 8707) and ``iss``
(RFC 9207) are its own. This package adds what is specific to an MCP endpoint:

- :mod:`~mcp_endpoint.oauth.metadata`: the protected resource metadata of each endpoint
  (RFC 9728), and the server metadata at the URLs clients try;
- :mod:`~mcp_endpoint.oauth.registration`: limits on anonymous registration;
- :mod:`~mcp_endpoint.oauth.views`: the consent page;
- :mod:`~mcp_endpoint.oauth.urls`: the URLs, with and without the final slash;
- :mod:`~mcp_endpoint.oauth.admin`: the toolkit's admin, showing how clients registered
  and what each token is bound to.
"""
