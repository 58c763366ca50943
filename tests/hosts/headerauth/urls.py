"""Snippets behind the product's own authentication class
(:class:`~tests.hosts.headerauth.authentication.HeaderTokenAuthentication`, an
``X-Api-Token`` header), with two endpoints: ``/mcp`` authenticates API keys and OAuth
tokens (the endpoint's defaults), ``/mcp-header`` the product's tokens as well.
``/snippets/`` takes all three, ``/header-snippets/`` the product's tokens only.
"""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.headerauth.authentication import HeaderTokenAuthentication
from tests.hosts.tokenauth.urls import TokenSnippetViewSet
from tests.hosts.tutorial.views import SnippetViewSet


class MixedSnippetViewSet(SnippetViewSet):
    """Snippets for holders of an API key, an OAuth token or the product's API token."""

    authentication_classes = [
        APIKeyAuthentication,
        OAuth2TokenAuthentication,
        HeaderTokenAuthentication,
    ]


class HeaderSnippetViewSet(TokenSnippetViewSet):
    """Snippets for holders of the product's API token."""

    authentication_classes = [HeaderTokenAuthentication]


router = SimpleRouter()
router.register("snippets", MixedSnippetViewSet, basename="snippet")
router.register("header-snippets", HeaderSnippetViewSet, basename="header-snippet")
NOUNS = {"header-snippet": {"singular": "header_snippet", "plural": "header_snippets"}}

keys_endpoint = host_endpoint("headerauth-keys")
keys_endpoint.register_router(router, per_basename=NOUNS)
header_endpoint = host_endpoint(
    "headerauth-header",
    AUTHENTICATION_CLASSES=[
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        "tests.hosts.headerauth.authentication.HeaderTokenAuthentication",
    ],
)
header_endpoint.register_router(router, per_basename=NOUNS)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", keys_endpoint.urls),
    path("mcp-header", header_endpoint.urls),
]
