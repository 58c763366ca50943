"""The product's orders API, guarded by the toolkit's own authentication class and scope
permission, beside OAuth for MCP clients and the endpoint."""

from __future__ import annotations

from typing import Any

from django.urls import include, path
from oauth2_provider.contrib.rest_framework import OAuth2Authentication, TokenHasScope
from rest_framework import serializers, viewsets
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from mcp_endpoint.oauth.views import LoginView
from tests.hosts import host_endpoint

ORDERS = [{"id": 1, "item": "teapot"}, {"id": 2, "item": "kettle"}]


class OrderSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    item = serializers.CharField()


class OrderViewSet(viewsets.GenericViewSet):
    """The signed-in customer's orders."""

    serializer_class = OrderSerializer
    pagination_class = None
    filter_backends: list[Any] = []

    authentication_classes = [OAuth2Authentication, APIKeyAuthentication, OAuth2TokenAuthentication]
    permission_classes = [TokenHasScope]
    required_scopes = ["orders:read"]
    throttle_classes: list[Any] = []

    def list(self, request: Request) -> Response:
        return Response(self.get_serializer(ORDERS, many=True).data)


router = SimpleRouter()
router.register("orders", OrderViewSet, basename="order")

endpoint = host_endpoint("ownoauth")
endpoint.register_router(router)

urlpatterns = [
    path("accounts/login/", LoginView.as_view(), name="login"),
    path("api/", include(router.urls)),
    path("", include("mcp_endpoint.oauth.urls")),
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("mcp", endpoint.urls),
]
