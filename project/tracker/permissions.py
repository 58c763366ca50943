from __future__ import annotations

from typing import Any

from rest_framework.permissions import SAFE_METHODS, BasePermission
from rest_framework.request import Request


class IsProjectOwnerOrReadOnly(BasePermission):
    """Members may read a project; only its owner may change or delete it."""

    message = "Only the project's owner may change it."

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        return request.method in SAFE_METHODS or obj.owner_id == request.user.pk


class IsAuthorOrReadOnly(BasePermission):
    """Members may read comments; only a comment's author may change or delete it."""

    message = "Only the comment's author may change it."

    def has_object_permission(self, request: Request, view: Any, obj: Any) -> bool:
        return request.method in SAFE_METHODS or obj.author_id == request.user.pk
