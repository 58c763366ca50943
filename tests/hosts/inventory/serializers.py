"""Serializers; the journal's reads ``ContentType`` rows each time its fields are built."""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from rest_framework import serializers

from tests.hosts.inventory.models import (
    Device,
    DeviceType,
    JournalEntry,
    Manufacturer,
    Region,
    Site,
    Tenant,
)

JOURNALED_MODELS = ("site", "device", "devicetype")


class TenantSerializer(serializers.ModelSerializer[Tenant]):
    class Meta:
        model = Tenant
        fields = ["id", "name", "slug", "description"]


class RegionSerializer(serializers.ModelSerializer[Region]):
    class Meta:
        model = Region
        fields = ["id", "name", "slug", "description"]


class SiteSerializer(serializers.ModelSerializer[Site]):
    class Meta:
        model = Site
        fields = [
            "id",
            "name",
            "slug",
            "status",
            "region",
            "tenant",
            "time_zone",
            "latitude",
            "longitude",
            "description",
        ]
        # Coordinates as JSON numbers, not strings, as the product's API answers them.
        extra_kwargs = {
            "latitude": {"coerce_to_string": False},
            "longitude": {"coerce_to_string": False},
        }


class LegacySiteSerializer(serializers.ModelSerializer[Site]):
    """What API version 4.1 answered: no coordinates yet."""

    class Meta:
        model = Site
        fields = ["id", "name", "slug", "status", "region", "tenant", "description"]


class ManufacturerSerializer(serializers.ModelSerializer[Manufacturer]):
    class Meta:
        model = Manufacturer
        fields = ["id", "name", "slug"]


class DeviceTypeSerializer(serializers.ModelSerializer[DeviceType]):
    class Meta:
        model = DeviceType
        fields = ["id", "manufacturer", "model", "slug", "u_height"]
        extra_kwargs = {"u_height": {"coerce_to_string": False}}


class DeviceSerializer(serializers.ModelSerializer[Device]):
    class Meta:
        model = Device
        fields = ["id", "name", "device_type", "site", "tenant", "status", "serial", "asset_tag"]


class JournalEntrySerializer(serializers.ModelSerializer[JournalEntry]):
    """``assigned_object_type`` is one of the content types a journal may be kept for,
    read from the database whenever the fields are built (as real products do)."""

    assigned_object_type = serializers.ChoiceField(choices=[])

    class Meta:
        model = JournalEntry
        fields = ["id", "assigned_object_type", "assigned_object_id", "kind", "comments"]

    def get_fields(self) -> dict[str, Any]:
        fields = super().get_fields()
        types = ContentType.objects.filter(app_label="inventory", model__in=JOURNALED_MODELS)
        fields["assigned_object_type"].choices = sorted(f"{t.app_label}.{t.model}" for t in types)
        return fields

    def to_representation(self, instance: JournalEntry) -> dict[str, Any]:
        data = super().to_representation(instance)
        object_type = instance.assigned_object_type
        data["assigned_object_type"] = f"{object_type.app_label}.{object_type.model}"
        return data

    def to_internal_value(self, data: Any) -> Any:
        values = super().to_internal_value(data)
        if "assigned_object_type" in values:
            app_label, model = values["assigned_object_type"].split(".")
            values["assigned_object_type"] = ContentType.objects.get(
                app_label=app_label, model=model
            )
        return values
