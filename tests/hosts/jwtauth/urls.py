"""Snippets behind simplejwt's ``JWTAuthentication``, with three endpoints.

``/snippets/`` takes API keys, OAuth tokens and JSON Web Tokens (the product that added
the app to its JWT API); ``/jwt-snippets/`` takes JSON Web Tokens only. ``/mcp``
authenticates API keys and OAuth tokens (the endpoint's defaults), ``/mcp-jwt`` JSON Web
Tokens as well, listed after them; ``/mcp-jwt-first`` lists ``JWTAuthentication`` first,
which refuses every bearer value that is not a JSON Web Token, API keys included, exactly as
``/jwt-first-snippets/`` does on REST.
"""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter
from rest_framework_simplejwt.authentication import JWTAuthentication

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts import host_endpoint
from tests.hosts.tokenauth.urls import TokenSnippetViewSet
from tests.hosts.tutorial.views import SnippetViewSet


class MixedSnippetViewSet(SnippetViewSet):
    """Snippets for holders of an API key, an OAuth token or a JSON Web Token."""

    authentication_classes = [APIKeyAuthentication, OAuth2TokenAuthentication, JWTAuthentication]


class JWTSnippetViewSet(TokenSnippetViewSet):
    """Snippets for holders of a JSON Web Token."""

    authentication_classes = [JWTAuthentication]


class JWTFirstSnippetViewSet(JWTSnippetViewSet):
    """Snippets whose authentication tries JSON Web Tokens before API keys."""

    authentication_classes = [JWTAuthentication, APIKeyAuthentication]


router = SimpleRouter()
router.register("snippets", MixedSnippetViewSet, basename="snippet")
router.register("jwt-snippets", JWTSnippetViewSet, basename="jwt-snippet")
rest_only = SimpleRouter()
rest_only.register("jwt-first-snippets", JWTFirstSnippetViewSet, basename="jwt-first-snippet")
NOUNS = {"jwt-snippet": {"singular": "jwt_snippet", "plural": "jwt_snippets"}}

API_KEYS_AND_OAUTH = [
    "mcp_endpoint.authentication.APIKeyAuthentication",
    "mcp_endpoint.authentication.OAuth2TokenAuthentication",
]
JWT = "rest_framework_simplejwt.authentication.JWTAuthentication"

keys_endpoint = host_endpoint("jwtauth-keys")
keys_endpoint.register_router(router, per_basename=NOUNS)
jwt_endpoint = host_endpoint("jwtauth-jwt", AUTHENTICATION_CLASSES=[*API_KEYS_AND_OAUTH, JWT])
jwt_endpoint.register_router(router, per_basename=NOUNS)
jwt_first_endpoint = host_endpoint(
    "jwtauth-jwt-first", AUTHENTICATION_CLASSES=[JWT, *API_KEYS_AND_OAUTH]
)
jwt_first_endpoint.register_router(router, per_basename=NOUNS)

urlpatterns = [
    path("", include(router.urls)),
    path("", include(rest_only.urls)),
    path("mcp", keys_endpoint.urls),
    path("mcp-jwt", jwt_endpoint.urls),
    path("mcp-jwt-first", jwt_first_endpoint.urls),
]
