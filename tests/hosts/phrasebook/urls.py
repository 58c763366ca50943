"""The phrasebook's REST API under ``/phrasebook/api/`` and its endpoint at
``/phrasebook/mcp``."""

from __future__ import annotations

from django.urls import include, path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import Endpoint
from tests.hosts.phrasebook import views

router = SimpleRouter()
router.register("phrases", views.PhraseViewSet, basename="phrase")
router.register("authors", views.AuthorViewSet)

endpoint = Endpoint("phrasebook", settings={"SERVER_NAME": "phrasebook"})
endpoint.register_router(router)

urlpatterns = [
    path("phrasebook/api/", include(router.urls)),
    path("phrasebook/mcp", endpoint.urls),
]
