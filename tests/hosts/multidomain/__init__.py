"""A multi-domain product: a middleware picks each request's URLconf by host name.

Requests to a tenant's domain (``<tenant>.example.com``) are routed by
``settings.TENANT_URLCONF`` (``request.urlconf``), never by ``ROOT_URLCONF``: a ``/mcp``
added to the root URLconf alone answers the tenant URLconf's 404. The recipe the docs give
(``tenant_urls_with_mcp``) includes the endpoint's URLs, and the OAuth URLs its challenge
points at, in the per-request URLconf too.
"""
