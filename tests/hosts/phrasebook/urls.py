"""The phrasebook's REST API at the root and its endpoint at ``/mcp``."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import Endpoint
from tests.hosts.phrasebook import views

router = SimpleRouter()
router.register("phrases", views.PhraseViewSet, basename="phrase")
router.register("authors", views.AuthorViewSet)

endpoint = Endpoint("phrasebook", server_name="phrasebook")
endpoint.register_router(router)

urlpatterns = [
    path("", include(router.urls)),
    path("mcp", endpoint.urls),
]
