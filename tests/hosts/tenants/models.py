from __future__ import annotations

from django.conf import settings
from django.db import models

from tests.hosts.tenants.scoping import ScopedManager


class AlreadyPaid(Exception):
    """The product's own error: an order is paid once (its middleware answers it 409)."""


class Tenant(models.Model):
    slug = models.SlugField(unique=True)
    members = models.ManyToManyField(settings.AUTH_USER_MODEL, related_name="tenants")

    class Meta:
        app_label = "tenants"

    def __str__(self) -> str:
        return self.slug


class Order(models.Model):
    tenant = models.ForeignKey(Tenant, related_name="orders", on_delete=models.CASCADE)
    project = models.SlugField()
    reference = models.CharField(max_length=40)
    total = models.DecimalField(max_digits=10, decimal_places=2)
    paid = models.BooleanField(default=False)

    objects = ScopedManager(tenant="tenant", project="project")

    class Meta:
        app_label = "tenants"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.reference


class OrderPayment(models.Model):
    order = models.ForeignKey(Order, related_name="payments", on_delete=models.CASCADE)
    amount = models.DecimalField(max_digits=10, decimal_places=2)

    objects = ScopedManager(tenant="order__tenant", project="order__project")

    class Meta:
        app_label = "tenants"
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.order} {self.amount}"


# Neither says its verbose_name_plural: Django's default would be "propertys", "mediums".
class Property(models.Model):
    tenant = models.ForeignKey(Tenant, related_name="properties", on_delete=models.CASCADE)
    project = models.SlugField()
    name = models.CharField(max_length=40)

    objects = ScopedManager(tenant="tenant", project="project")

    class Meta:
        app_label = "tenants"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.name


class Medium(models.Model):
    tenant = models.ForeignKey(Tenant, related_name="media", on_delete=models.CASCADE)
    project = models.SlugField()
    title = models.CharField(max_length=40)

    objects = ScopedManager(tenant="tenant", project="project")

    class Meta:
        app_label = "tenants"
        ordering = ["id"]

    def __str__(self) -> str:
        return self.title
