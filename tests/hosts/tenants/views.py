from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from rest_framework import permissions, serializers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts.tenants.models import AlreadyPaid, Medium, Order, OrderPayment, Property


class OrderSerializer(serializers.ModelSerializer):
    class Meta:
        model = Order
        fields = ["id", "reference", "total", "paid"]
        read_only_fields = ["paid"]


class OrderPaymentSerializer(serializers.ModelSerializer):
    class Meta:
        model = OrderPayment
        fields = ["id", "order", "amount"]


class PropertySerializer(serializers.ModelSerializer):
    class Meta:
        model = Property
        fields = ["id", "name"]


class MediumSerializer(serializers.ModelSerializer):
    class Meta:
        model = Medium
        fields = ["id", "title"]


class Page(PageNumberPagination):
    page_size = 2


class TenantViewSet(viewsets.ModelViewSet):
    """What every view of this host shares: the rows of the tenant and project in the URL,
    for a member of that tenant, and no one else's."""

    authentication_classes = [
        APIKeyAuthentication,
        OAuth2TokenAuthentication,
        SessionAuthentication,
    ]
    permission_classes = [permissions.IsAuthenticated]
    pagination_class = Page
    filter_backends: list[Any] = []
    throttle_classes: list[Any] = []

    def scoped(self, queryset: QuerySet[Any]) -> QuerySet[Any]:
        """The rows the middleware's scope lets through (the tenant and project of the
        path), of a tenant the caller belongs to."""
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        if not self.request.tenant.members.filter(pk=self.request.user.pk).exists():
            return queryset.none()
        return queryset

    # Serializers a tenant has of its own (its custom fields), by tenant slug.
    tenant_serializers: dict[str, type[serializers.BaseSerializer[Any]]] = {}

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Any]]:
        # Chosen by the tenant the middleware sets: a request without it cannot be served.
        chosen = self.tenant_serializers.get(self.request.tenant.slug)
        return chosen or super().get_serializer_class()

    def get_serializer_context(self) -> dict[str, Any]:
        # What the product's serializers read of the tenant, set by its middleware.
        return {**super().get_serializer_context(), "tenant": self.request.tenant}

    def perform_create(self, serializer: Any) -> None:
        tenant = self.request.tenant
        if not tenant.members.filter(pk=self.request.user.pk).exists():
            from rest_framework.exceptions import NotFound

            raise NotFound("No such tenant.")
        serializer.save(tenant=tenant, project=self.request.project)


class OrderViewSet(TenantViewSet):
    """The orders of a project."""

    serializer_class = OrderSerializer

    def get_queryset(self) -> QuerySet[Order]:
        return self.scoped(Order.objects.all())

    @action(detail=True, methods=["post"])
    def mark_paid(self, request: Request, tenant: str, project: str, pk: str) -> Response:
        """Mark the order paid; the request's body is not read."""
        order = self.get_object()
        if order.paid:
            raise AlreadyPaid(f"Order {order.reference} is paid already.")
        order.paid = True
        order.save(update_fields=["paid"])
        return Response(self.get_serializer(order).data)

    @action(detail=False, methods=["get"])
    def unpaid(self, request: Request, tenant: str, project: str) -> Response:
        """The orders not paid yet."""
        orders = self.get_queryset().filter(paid=False)
        return Response(self.get_serializer(orders, many=True).data)

    @action(detail=False, methods=["get"])
    def largest(self, request: Request, tenant: str, project: str) -> Response:
        """The three largest orders."""
        orders = self.get_queryset().order_by("-total")[:3]
        return Response(self.get_serializer(orders, many=True).data)


class OrderPaymentViewSet(TenantViewSet):
    """The payments of the project's orders."""

    serializer_class = OrderPaymentSerializer

    def get_queryset(self) -> QuerySet[OrderPayment]:
        if getattr(self, "swagger_fake_view", False):
            return OrderPayment.objects.none()
        return self.scoped(OrderPayment.objects.all())

    def perform_create(self, serializer: Any) -> None:
        # The serializer's order field looked the order up among the scope's rows.
        if not self.request.tenant.members.filter(pk=self.request.user.pk).exists():
            raise serializers.ValidationError({"order": ["No such order."]})
        serializer.save()


class PropertyViewSet(TenantViewSet):
    """The project's properties."""

    serializer_class = PropertySerializer

    def get_queryset(self) -> QuerySet[Property]:
        return self.scoped(Property.objects.all())


class MediumViewSet(TenantViewSet):
    """The project's media."""

    serializer_class = MediumSerializer

    def get_queryset(self) -> QuerySet[Medium]:
        return self.scoped(Medium.objects.all())
