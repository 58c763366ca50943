"""A URLconf for the DRF adapter's tests: the host's URLs, the test viewsets' REST routes, and
an endpoint at ``/drf-mcp`` that makes tools of those viewsets.

Use it with ``@pytest.mark.urls("tests.urls_drf_testing")``. The REST routes sit at the root
under the same prefixes the endpoint registers, so a tool's inner request has the path the
REST API serves. The endpoint lives for the whole test run: everything registered here must
pass the system checks.
"""

from __future__ import annotations

from typing import Any

from django.urls import path
from rest_framework.routers import SimpleRouter

from mcp_endpoint.endpoint import Endpoint
from project.urls import urlpatterns as host_urlpatterns
from tests.viewsets_testing import (
    BeaconViewSet,
    BoardViewSet,
    CategoryViewSet,
    ExplodingViewSet,
    FragileProjectViewSet,
    GadgetViewSet,
    HalfRoutedViewSet,
    NoteViewSet,
    PersonViewSet,
    ProbeViewSet,
    RefusingProjectViewSet,
    ShipmentViewSet,
    TokenOnlyBoardViewSet,
)

drf_endpoint = Endpoint("drf-tests", server_name="drf-tests")

# (prefix, viewset, basename, register_viewset options)
REGISTRATIONS: list[tuple[str, type[Any], str, dict[str, Any]]] = [
    ("gadgets", GadgetViewSet, "gadget", {}),
    ("shipments", ShipmentViewSet, "shipment", {}),
    ("categories", CategoryViewSet, "category", {}),
    (
        "notes",
        NoteViewSet,
        "note",
        {
            "include": ["list", "retrieve", "create"],
            "names": {"list": "browse_notes"},
            "descriptions": {"create": "Leave a note on a task."},
            # Long-running for a client that can poll: runs as a task.
            "task_support": {"list": "optional"},
            "singular": "note",
            "plural": "notes",
        },
    ),
    (
        "people",
        PersonViewSet,
        "person",
        {
            "exclude": ["destroy", "update"],
            "annotations": {
                "deactivate": {"destructiveHint": True},
                "retrieve": {"openWorldHint": True, "title": "Look a person up"},
            },
            "singular": "person",
            "plural": "people",
        },
    ),
    ("cards", BoardViewSet, "card", {"singular": "card", "plural": "cards"}),
    ("probes", ProbeViewSet, "probe", {"singular": "probe", "plural": "probes"}),
    (
        "token-cards",
        TokenOnlyBoardViewSet,
        "token-card",
        {"singular": "token_card", "plural": "token_cards", "include": ["list"]},
    ),
    ("beacons", BeaconViewSet, "beacon", {}),
    ("explosions", ExplodingViewSet, "exploding", {"names": {"list": "explode"}}),
    (
        "fragile-projects",
        FragileProjectViewSet,
        "fragile-project",
        {"names": {"create": "create_fragile_project"}},
    ),
    (
        "refusing-projects",
        RefusingProjectViewSet,
        "refusing-project",
        {"names": {"create": "create_refused_project"}},
    ),
]

router = SimpleRouter()
for prefix, viewset, basename, options in REGISTRATIONS:
    router.register(prefix, viewset, basename=basename)
    drf_endpoint.register_viewset(viewset, prefix=prefix, basename=basename, **options)

urlpatterns = [
    *host_urlpatterns,
    *router.urls,
    path("drf-mcp", drf_endpoint.urls),
    # A viewset routed by hand, list only: the checks test registers it to see E021.
    path("half-routed/", HalfRoutedViewSet.as_view({"get": "list"})),
]
