"""The MCP endpoint, the admin and one REST viewset, for
:mod:`tests.settings_toolkit_not_installed`."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.urls import include, path
from rest_framework import mixins, serializers, viewsets
from rest_framework.routers import DefaultRouter

from mcp_endpoint import site


class UserSerializer(serializers.ModelSerializer[Any]):
    class Meta:
        model = get_user_model()
        fields = ["id", "username"]


class UserViewSet(mixins.ListModelMixin, mixins.CreateModelMixin, viewsets.GenericViewSet[Any]):
    """The users: listed, and made."""

    queryset = get_user_model().objects.order_by("id")
    serializer_class = UserSerializer


router = DefaultRouter()
router.register("users", UserViewSet)
site.register_router(router)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", include(router.urls)),
    path("mcp", site.urls),
]
