"""The tenants host's URLs: two plain routers under ``api/v1/<tenant>/projects/<project>/``,
the MCP endpoint at ``/mcp``. Neither router knows the prefix: ``register_router`` finds
where each is mounted and takes the prefix's kwargs as its viewsets' parents."""

from __future__ import annotations

from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from tests.hosts import host_endpoint
from tests.hosts.tenants.views import (
    MediumViewSet,
    OrderPaymentViewSet,
    OrderViewSet,
    PropertyViewSet,
)

PREFIX = r"^api/v1/(?P<tenant>[^/]+)/projects/(?P<project>[^/]+)/"

orders = DefaultRouter()
orders.register("orders", OrderViewSet, basename="order")
orders.register("order-payments", OrderPaymentViewSet, basename="order-payments")
catalog = DefaultRouter()
catalog.register("properties", PropertyViewSet, basename="property")
catalog.register("media", MediumViewSet, basename="medium")

endpoint = host_endpoint("tenants")
endpoint.register_router(orders)
endpoint.register_router(catalog)

urlpatterns = [
    re_path(PREFIX, include(orders.urls)),
    re_path(PREFIX, include(catalog.urls)),
    path("mcp", endpoint.urls),
]
