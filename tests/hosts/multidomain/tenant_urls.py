"""A tenant's URLconf as the product had it: its API, and nothing of the endpoint's."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path
from rest_framework.routers import SimpleRouter

from tests.hosts.headerauth.urls import MixedSnippetViewSet

router = SimpleRouter()
router.register("snippets", MixedSnippetViewSet, basename="snippet")

urlpatterns: list[URLPattern | URLResolver] = [path("", include(router.urls))]
