"""Who may do what: read-only tokens never write, and object permissions grant each action."""

from __future__ import annotations

from typing import Any

from django.contrib.contenttypes.models import ContentType
from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request

from tests.hosts.inventory.models import ObjectPermission, Token

ACTION_OF_METHOD = {
    "GET": "view",
    "HEAD": "view",
    "OPTIONS": "view",
    "POST": "add",
    "PUT": "change",
    "PATCH": "change",
    "DELETE": "delete",
}


def action_of(request: Request) -> str:
    return ACTION_OF_METHOD.get(request.method or "GET", "view")


class TokenPermissions(BasePermission):
    """The user holds an object permission for the model and the action; a read-only token
    reads only."""

    message = "You do not have permission to perform this action."

    def has_permission(self, request: Request, view: Any) -> bool:
        user = request.user
        if not (user and user.is_authenticated):
            return False
        if (
            isinstance(request.auth, Token)
            and not request.auth.write_enabled
            and request.method not in SAFE_METHODS
        ):
            self.message = "This token does not permit write operations."
            return False
        if user.is_superuser:
            return True
        model = view.queryset.model
        return ObjectPermission.objects.filter(
            users=user,
            object_types=ContentType.objects.get_for_model(model),
            **{f"can_{action_of(request)}": True},
        ).exists()
