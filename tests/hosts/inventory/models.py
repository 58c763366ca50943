"""Tenants, regions, sites, manufacturers, device types, devices and journal entries; tokens
and object permissions."""

from __future__ import annotations

import secrets
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

STATUSES = [("active", "Active"), ("planned", "Planned"), ("retired", "Retired")]
# A choice list as long as a real product's (its time zones, or the languages of a
# highlighter): 600 values, the case the size budget is about.
TIME_ZONES = [(f"Zone/{n:03d}", f"Time zone {n:03d}") for n in range(600)]


class RestrictedQuerySet(models.QuerySet[Any]):
    def restrict(self, user: Any, action: str = "view") -> RestrictedQuerySet:
        """The objects ``user`` may ``action``: all for a superuser, otherwise those the
        constraints of the user's object permissions for this model and action match."""
        if user.is_superuser:
            return self
        if not user.is_authenticated:
            return self.none()
        object_type = ContentType.objects.get_for_model(self.model)
        permissions = ObjectPermission.objects.filter(
            users=user, object_types=object_type, **{f"can_{action}": True}
        )
        allowed = Q(pk__in=[])
        for permission in permissions:
            if not permission.constraints:
                return self
            for constraint in permission.constraints:
                allowed |= Q(**constraint)
        return self.filter(allowed)


class Token(models.Model):
    """The product's own API token: ``Authorization: Token <key>``; may be read-only."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    key = models.CharField(max_length=40, unique=True)
    write_enabled = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"token {self.key[:6]}… of {self.user}"

    @classmethod
    def issue(cls, user: Any, *, write_enabled: bool = True) -> Token:
        return cls.objects.create(user=user, key=secrets.token_hex(20), write_enabled=write_enabled)


class ObjectPermission(models.Model):
    """What some users may do with some models; ``constraints`` (a list of filter dicts,
    any of which may match) narrows it to some objects."""

    name = models.CharField(max_length=100)
    users = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="+")
    object_types = models.ManyToManyField(ContentType, related_name="+")
    can_view = models.BooleanField(default=True)
    can_add = models.BooleanField(default=False)
    can_change = models.BooleanField(default=False)
    can_delete = models.BooleanField(default=False)
    constraints = models.JSONField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class Tenant(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.CharField(max_length=200, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Region(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.CharField(max_length=200, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Site(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)
    status = models.CharField(max_length=20, choices=STATUSES, default="active")
    region = models.ForeignKey(Region, null=True, blank=True, on_delete=models.PROTECT)
    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT)
    time_zone = models.CharField(max_length=40, choices=TIME_ZONES, blank=True)
    latitude = models.DecimalField(
        max_digits=8,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("-90")), MaxValueValidator(Decimal("90"))],
        help_text="GPS coordinate in decimal format (xx.yyyyyy)",
    )
    longitude = models.DecimalField(
        max_digits=9,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal("-180")), MaxValueValidator(Decimal("180"))],
        help_text="GPS coordinate in decimal format (xx.yyyyyy)",
    )
    description = models.CharField(max_length=200, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Manufacturer(models.Model):
    name = models.CharField(max_length=100, unique=True)
    slug = models.SlugField(max_length=100, unique=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DeviceType(models.Model):
    manufacturer = models.ForeignKey(Manufacturer, on_delete=models.PROTECT)
    model = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, unique=True)
    u_height = models.DecimalField(
        max_digits=4,
        decimal_places=1,
        default=Decimal("1.0"),
        validators=[MinValueValidator(Decimal("0")), MaxValueValidator(Decimal("100"))],
        help_text="Height in rack units",
    )

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["model"]

    def __str__(self) -> str:
        return self.model


class Device(models.Model):
    name = models.CharField(max_length=64, unique=True)
    device_type = models.ForeignKey(DeviceType, on_delete=models.PROTECT)
    site = models.ForeignKey(Site, on_delete=models.PROTECT)
    tenant = models.ForeignKey(Tenant, null=True, blank=True, on_delete=models.PROTECT)
    status = models.CharField(max_length=20, choices=STATUSES, default="active")
    serial = models.CharField(max_length=50, blank=True)
    asset_tag = models.CharField(max_length=50, unique=True, null=True, blank=True)

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class JournalEntry(models.Model):
    """A note on any object: the kind of object is a content type."""

    KINDS = [("info", "Info"), ("success", "Success"), ("warning", "Warning"), ("danger", "Danger")]

    assigned_object_type = models.ForeignKey(ContentType, on_delete=models.CASCADE)
    assigned_object_id = models.PositiveBigIntegerField()
    kind = models.CharField(max_length=20, choices=KINDS, default="info")
    comments = models.TextField()

    objects = RestrictedQuerySet.as_manager()

    class Meta:
        ordering = ["-id"]
        verbose_name_plural = "journal entries"

    def __str__(self) -> str:
        return f"{self.kind} entry {self.pk}"
