"""The tutorial's API, with an endpoint that also takes the browser session of a page on
the product's own site: ``AUTHENTICATION_CLASSES`` lists DRF's ``SessionAuthentication``
after the app's classes, and ``ALLOWED_ORIGINS`` the site's own origin (a browser sends
``Origin`` with every POST, same-origin ones included).

``SessionAuthentication`` checks the CSRF token of a session's unsafe requests, and every
MCP message is a POST: a page sends the token in ``X-CSRFToken``, as it does to the REST
API.
"""

from __future__ import annotations

from django.urls import include, path

from tests.hosts import host_endpoint
from tests.hosts.tutorial.urls import router

endpoint = host_endpoint(
    "sessionauth",
    AUTHENTICATION_CLASSES=[
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    ALLOWED_ORIGINS=["http://testserver"],
)
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
