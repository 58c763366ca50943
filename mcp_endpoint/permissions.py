"""The scope policy, as a DRF permission: one decision for the REST API and ``/mcp``.

:class:`HasScopes` refuses a request whose credential carries scopes (an API key, an OAuth
access token) but not the ones the default policy of :mod:`mcp_endpoint.scopes` asks of
the view and method. It is the only place the app refuses a request for its scopes:

- at ``/mcp``, the DRF adapter puts it first among the permissions of the view a tool
  calls (with the endpoint's ``SCOPES_BY_METHOD``), so a tool call is decided by the very
  object a REST request is;
- on the REST API, list it in ``REST_FRAMEWORK["DEFAULT_PERMISSION_CLASSES"]`` (first, or
  composed with the host's own: ``[HasScopes, IsAuthenticated]``);
- a view that does not list it is not left open: the app's authentication classes apply
  it to the requests they authenticate (:func:`apply_unlisted`), so a host that adopted
  them before this class existed keeps its refusals without editing its settings.

Authentication classes otherwise only say who is calling; what the credential may do is
decided here.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission

from mcp_endpoint import scopes

# The endpoint's mapping was not given: the process-wide setting's.
FROM_SETTINGS: Any = object()


class HasScopes(BasePermission):
    """Whether the request's credential holds the scopes the default policy asks for.

    A credential with no scopes (a session, a DRF token) and a view with a scope policy of
    its own (django-oauth-toolkit's permissions, ``required_scopes``) are let through: the
    view's other permissions decide. ``by_method`` is the endpoint's ``SCOPES_BY_METHOD``;
    by default ``MCP_ENDPOINT["SCOPES_BY_METHOD"]``.
    """

    message = "This action needs scopes the credential does not hold."

    def __init__(self, by_method: Mapping[str, Iterable[str]] | None = FROM_SETTINGS) -> None:
        self.by_method = by_method

    def has_permission(self, request: Any, view: Any) -> bool:
        reason = self.refusal(request, view, scopes.held_scopes(request.auth))
        if reason is None:
            return True
        # DRF answers with the permission's message: this request's own.
        self.message = reason
        return False

    def refusal(self, request: Any, view: Any, held: frozenset[str] | None) -> str | None:
        """Why a credential holding ``held`` may not make ``request`` to ``view``; None
        when it may."""
        by_method = self.by_method
        if by_method is FROM_SETTINGS:
            from mcp_endpoint.conf import mcp_settings

            by_method = mcp_settings.SCOPES_BY_METHOD
        return scopes.refusal(view, request.method, held, by_method)


def lists(permissions: Iterable[Any], cls: type[BasePermission] = HasScopes) -> bool:
    """Whether one of the view's ``permissions`` is ``cls``, alone or composed (DRF's
    ``A & B``, ``A | B`` and ``~A`` hold their operands as ``op1`` / ``op2``)."""
    return any(_holds(p, cls) for p in permissions)


def _holds(permission: Any, cls: type[BasePermission]) -> bool:
    if isinstance(permission, cls):
        return True
    return any(
        _holds(getattr(permission, operand), cls)
        for operand in ("op1", "op2")
        if getattr(permission, operand, None) is not None
    )


def apply_unlisted(request: Any, auth: Any) -> None:
    """:class:`HasScopes` for a REST request to a view that does not list it, run by the
    app's authentication classes once they have accepted ``auth``.

    A request with no view (the MCP transport's own authentication) is left alone: each
    tool call's view runs the permission itself.
    """
    view = (getattr(request, "parser_context", None) or {}).get("view")
    if view is None or lists(view.get_permissions()):
        return
    reason = HasScopes().refusal(request, view, scopes.held_scopes(auth))
    if reason is not None:
        raise PermissionDenied(reason)
