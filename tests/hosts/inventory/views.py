"""The REST API: seven model viewsets on one base class, as a large product has them."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django_filters.rest_framework import DjangoFilterBackend
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.exceptions import PermissionDenied
from rest_framework.filters import OrderingFilter
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.serializers import BaseSerializer
from rest_framework.versioning import AcceptHeaderVersioning

from mcp_endpoint.authentication import APIKeyAuthentication
from tests.hosts.inventory import filtersets, serializers
from tests.hosts.inventory.authentication import TokenAuthentication
from tests.hosts.inventory.models import (
    Device,
    DeviceType,
    JournalEntry,
    Manufacturer,
    Region,
    Site,
    Tenant,
)
from tests.hosts.inventory.permissions import TokenPermissions, action_of


class InventoryVersioning(AcceptHeaderVersioning):
    """``Accept: application/json; version=4.1``; 4.2 when the header names none."""

    default_version = "4.2"
    allowed_versions = ("4.1", "4.2")


class InventoryPagination(LimitOffsetPagination):
    default_limit = 50
    max_limit = 1000


def one_or_many(serializer: type[BaseSerializer[Any]], name: str) -> Any:
    """The create body: one object, or a list of them to create at once."""
    return extend_schema(
        request=PolymorphicProxySerializer(
            component_name=name,
            serializers=[serializer, serializer(many=True)],
            resource_type_field_name=None,
            many=False,
        ),
        responses={201: serializer},
    )


class InventoryViewSet(viewsets.ModelViewSet[Any]):
    """Every viewset's policy: the product's tokens, object permissions, header versioning,
    limit/offset pages, filters and ordering; a create takes one object or a list."""

    authentication_classes = [TokenAuthentication, APIKeyAuthentication, SessionAuthentication]
    permission_classes = [TokenPermissions]
    versioning_class = InventoryVersioning
    pagination_class = InventoryPagination
    filter_backends = [DjangoFilterBackend, OrderingFilter]
    ordering_fields = ["id", "name"]

    def get_queryset(self) -> Any:
        return self.queryset.restrict(self.request.user, action_of(self.request))  # type: ignore[union-attr]

    def get_serializer(self, *args: Any, **kwargs: Any) -> Any:
        if isinstance(kwargs.get("data"), list):
            kwargs["many"] = True
        return super().get_serializer(*args, **kwargs)

    def perform_create(self, serializer: Any) -> None:
        with transaction.atomic():
            saved = serializer.save()
            self.enforce_constraints(saved if isinstance(saved, list) else [saved], "add")

    def perform_update(self, serializer: Any) -> None:
        with transaction.atomic():
            self.enforce_constraints([serializer.save()], "change")

    def enforce_constraints(self, objects: list[Any], action: str) -> None:
        # A change must leave every object inside the caller's permitted set.
        model = self.queryset.model  # type: ignore[union-attr]
        pks = [o.pk for o in objects]
        allowed = model.objects.restrict(self.request.user, action).filter(pk__in=pks).count()
        if allowed != len(pks):
            raise PermissionDenied("You may not create or change objects like this.")


@extend_schema_view(create=one_or_many(serializers.TenantSerializer, "TenantRequestOneOrMany"))
class TenantViewSet(InventoryViewSet):
    """Tenants: the customers or departments objects belong to."""

    queryset = Tenant.objects.all()
    serializer_class = serializers.TenantSerializer
    filterset_class = filtersets.TenantFilterSet


@extend_schema_view(create=one_or_many(serializers.RegionSerializer, "RegionRequestOneOrMany"))
class RegionViewSet(InventoryViewSet):
    """Regions: where sites are."""

    queryset = Region.objects.all()
    serializer_class = serializers.RegionSerializer
    filterset_class = filtersets.RegionFilterSet


@extend_schema_view(create=one_or_many(serializers.SiteSerializer, "SiteRequestOneOrMany"))
class SiteViewSet(InventoryViewSet):
    """Sites: buildings or campuses that hold devices."""

    queryset = Site.objects.all()
    serializer_class = serializers.SiteSerializer
    filterset_class = filtersets.SiteFilterSet

    def get_serializer_class(self) -> Any:
        if getattr(self.request, "version", None) == "4.1":
            return serializers.LegacySiteSerializer
        return serializers.SiteSerializer


@extend_schema_view(
    create=one_or_many(serializers.ManufacturerSerializer, "ManufacturerRequestOneOrMany")
)
class ManufacturerViewSet(InventoryViewSet):
    """Manufacturers of device types."""

    queryset = Manufacturer.objects.all()
    serializer_class = serializers.ManufacturerSerializer
    filterset_class = filtersets.ManufacturerFilterSet


@extend_schema_view(
    create=one_or_many(serializers.DeviceTypeSerializer, "DeviceTypeRequestOneOrMany")
)
class DeviceTypeViewSet(InventoryViewSet):
    """Device types: a manufacturer's model of device."""

    queryset = DeviceType.objects.all()
    serializer_class = serializers.DeviceTypeSerializer
    filterset_class = filtersets.DeviceTypeFilterSet
    ordering_fields = ["id", "model"]


@extend_schema_view(create=one_or_many(serializers.DeviceSerializer, "DeviceRequestOneOrMany"))
class DeviceViewSet(InventoryViewSet):
    """Devices: the equipment at a site."""

    queryset = Device.objects.all()
    serializer_class = serializers.DeviceSerializer
    filterset_class = filtersets.DeviceFilterSet


class JournalEntryViewSet(InventoryViewSet):
    """Journal entries: notes kept on sites, devices and device types."""

    queryset = JournalEntry.objects.all()
    serializer_class = serializers.JournalEntrySerializer
    filterset_class = filtersets.JournalEntryFilterSet
    ordering_fields = ["id"]
