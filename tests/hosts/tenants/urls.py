"""The tenants host's URLs: two plain routers under ``api/v1/<tenant>/projects/<project>/``,
the MCP endpoint at ``/mcp``. Neither router knows the prefix: ``register_router`` finds
where each is mounted and takes the prefix's kwargs as its viewsets' parents.

The views read the tenant and project the product's middleware sets on the request, and
query models scoped by the row scope it activates; schemas are built with a request that
carries an example tenant (``schema_request``), no rows in scope, as no row is read."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from django.urls import include, path, re_path
from rest_framework.routers import DefaultRouter

from tests.hosts import host_endpoint
from tests.hosts.tenants.models import Tenant
from tests.hosts.tenants.scoping import scopes_disabled
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


def as_a_tenant(request: Any) -> AbstractContextManager[None]:
    """What the middleware sets on an API request, for an example tenant that is not in
    the database (a schema reads no row)."""
    request.tenant = Tenant(slug="example")
    request.project = "example"
    return scopes_disabled()


endpoint = host_endpoint("tenants")
endpoint.register_router(orders, schema_request=as_a_tenant)
endpoint.register_router(catalog, schema_request=as_a_tenant)

urlpatterns = [
    re_path(PREFIX, include(orders.urls)),
    re_path(PREFIX, include(catalog.urls)),
    path("mcp", endpoint.urls),
]
