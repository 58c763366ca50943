from __future__ import annotations

from typing import Any

from django.db.models import Model, QuerySet
from rest_framework import permissions, serializers, viewsets
from rest_framework.authentication import SessionAuthentication
from rest_framework.decorators import action
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response

from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from tests.hosts.tenants.models import Medium, Order, OrderPayment, Property, Tenant


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
        if getattr(self, "swagger_fake_view", False):
            return queryset.none()
        return queryset.filter(
            tenant__slug=self.kwargs["tenant"],
            tenant__members=self.request.user,
            project=self.kwargs["project"],
        )

    def perform_create(self, serializer: Any) -> None:
        tenant = Tenant.objects.filter(
            slug=self.kwargs["tenant"], members=self.request.user
        ).first()
        if tenant is None:
            from rest_framework.exceptions import NotFound

            raise NotFound("No such tenant.")
        serializer.save(tenant=tenant, project=self.kwargs["project"])


class OrderViewSet(TenantViewSet):
    """The orders of a project."""

    serializer_class = OrderSerializer

    def get_queryset(self) -> QuerySet[Order]:
        return self.scoped(Order.objects.all())

    @action(detail=True, methods=["post"])
    def mark_paid(self, request: Request, tenant: str, project: str, pk: str) -> Response:
        """Mark the order paid; the request's body is not read."""
        order = self.get_object()
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
        orders: QuerySet[Model] = self.scoped(Order.objects.all())
        return OrderPayment.objects.filter(order__in=orders)

    def perform_create(self, serializer: Any) -> None:
        order = serializer.validated_data["order"]
        if not self.scoped(Order.objects.filter(pk=order.pk)).exists():
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
