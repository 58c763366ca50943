"""Filtersets that offer a dozen lookups per field, generated as a large product does:
``name``, ``name__n``, ``name__ic``, ``name__nic``, ``name__isw``, ... for every field."""

from __future__ import annotations

from typing import Any

import django_filters
from django.db import models
from django.db.models import Q, QuerySet
from django_filters.utils import get_model_field

from tests.hosts.inventory.models import (
    Device,
    DeviceType,
    JournalEntry,
    Manufacturer,
    Region,
    Site,
    Tenant,
)

# suffix -> (Django lookup, negated)
TEXT_LOOKUPS = {
    "n": ("exact", True),
    "ie": ("iexact", False),
    "nie": ("iexact", True),
    "ic": ("icontains", False),
    "nic": ("icontains", True),
    "isw": ("istartswith", False),
    "nisw": ("istartswith", True),
    "iew": ("iendswith", False),
    "niew": ("iendswith", True),
    "regex": ("regex", False),
    "iregex": ("iregex", False),
}
NUMBER_LOOKUPS = {
    "n": ("exact", True),
    "lt": ("lt", False),
    "lte": ("lte", False),
    "gt": ("gt", False),
    "gte": ("gte", False),
}
RELATION_LOOKUPS = {"n": ("exact", True)}


class LookupFilterSet(django_filters.FilterSet):
    """Every field of ``Meta.fields`` gets its exact filter, and one filter per lookup."""

    q = django_filters.CharFilter(method="search", label="Search")
    search_fields: tuple[str, ...] = ("name",)

    @classmethod
    def get_filters(cls) -> dict[str, Any]:
        filters: dict[str, Any] = super().get_filters()
        for name in list(filters):
            if "__" in name or name == "q":
                continue
            field = get_model_field(cls._meta.model, name)
            if field is None:
                continue
            if field.is_relation:
                lookups = RELATION_LOOKUPS
            elif isinstance(field, models.CharField | models.TextField) and not field.choices:
                lookups = TEXT_LOOKUPS
            elif field.choices:
                lookups = RELATION_LOOKUPS
            else:
                lookups = NUMBER_LOOKUPS
            for suffix, (lookup, negated) in lookups.items():
                generated = cls.filter_for_field(field, name, lookup)
                generated.exclude = negated
                filters[f"{name}__{suffix}"] = generated
        return filters

    def search(self, queryset: QuerySet[Any], name: str, value: str) -> QuerySet[Any]:
        query = Q()
        for field in self.search_fields:
            query |= Q(**{f"{field}__icontains": value})
        return queryset.filter(query)


class TenantFilterSet(LookupFilterSet):
    class Meta:
        model = Tenant
        fields = {"id": ["exact", "in"], "name": ["exact"], "slug": ["exact", "in"]}


class RegionFilterSet(LookupFilterSet):
    class Meta:
        model = Region
        fields = {"id": ["exact", "in"], "name": ["exact"], "slug": ["exact", "in"]}


class SiteFilterSet(LookupFilterSet):
    search_fields = ("name", "description")

    class Meta:
        model = Site
        fields = {
            "id": ["exact", "in"],
            "name": ["exact"],
            "slug": ["exact", "in"],
            "status": ["exact"],
            "region": ["exact"],
            "tenant": ["exact"],
            "time_zone": ["exact"],
            "latitude": ["exact"],
            "longitude": ["exact"],
            "description": ["exact"],
        }


class ManufacturerFilterSet(LookupFilterSet):
    class Meta:
        model = Manufacturer
        fields = {"id": ["exact", "in"], "name": ["exact"], "slug": ["exact", "in"]}


class DeviceTypeFilterSet(LookupFilterSet):
    search_fields = ("model",)

    class Meta:
        model = DeviceType
        fields = {
            "id": ["exact", "in"],
            "manufacturer": ["exact"],
            "model": ["exact"],
            "slug": ["exact", "in"],
            "u_height": ["exact"],
        }


class DeviceFilterSet(LookupFilterSet):
    search_fields = ("name", "serial", "asset_tag")

    class Meta:
        model = Device
        fields = {
            "id": ["exact", "in"],
            "name": ["exact"],
            "device_type": ["exact"],
            "site": ["exact"],
            "tenant": ["exact"],
            "status": ["exact"],
            "serial": ["exact"],
            "asset_tag": ["exact"],
        }


class JournalEntryFilterSet(LookupFilterSet):
    search_fields = ("comments",)

    class Meta:
        model = JournalEntry
        fields = {
            "id": ["exact", "in"],
            "assigned_object_id": ["exact"],
            "kind": ["exact"],
            "comments": ["exact"],
        }
