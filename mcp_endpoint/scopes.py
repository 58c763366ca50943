"""The default scope policy: ``read`` for safe methods, ``write`` for the rest.

Most DRF views declare no scope policy of their own: they check who the user is, not what
the credential may do. Left alone, a key or token created with the scope ``read`` would
write through every such view. So, on views that declare no policy, a credential that
carries scopes (an API key, an OAuth access token) needs the scopes
``MCP_ENDPOINT["SCOPES_BY_METHOD"]`` names for the request's method.

A view declares its own policy with django-oauth-toolkit's scope permissions
(``TokenHasScope`` and its family, anywhere in its permissions) or with a
``required_scopes`` / ``required_alternate_scopes`` attribute; its policy then wins. A
view may also name scopes per action with ``required_scopes_by_action`` (actions it does
not name fall back to the method mapping).

One object refuses by this rule, REST and MCP alike: the DRF permission
:class:`mcp_endpoint.permissions.HasScopes`, which every tool call's view runs and REST
views run where the host lists it (the app's authentication classes apply it to the views
that do not, see there). The DRF adapter also makes the rule the tools' ``required_scopes``,
so that ``tools/list`` hides what a credential may not call and the 401 challenge names the
scopes the endpoint uses.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mcp_endpoint.compat import is_toolkit_class, toolkit_in_use

# The toolkit's scope permissions, by name: a host without the toolkit has none of them,
# and one that keeps an older toolkit for its own views has them under the same names.
SCOPE_PERMISSIONS = frozenset(
    {"TokenHasScope", "IsAuthenticatedOrTokenHasScope", "TokenMatchesOASRequirements"}
)
SCOPE_ATTRIBUTES = ("required_scopes", "required_alternate_scopes")


# What a scope the default policy names is called where no toolkit describes it.
DEFAULT_DESCRIPTIONS = {"read": "Reading scope", "write": "Writing scope"}


def known_scopes() -> dict[str, str]:
    """The scopes a key may hold, name to description: django-oauth-toolkit's ``SCOPES``
    where the host runs the toolkit (any version), else those ``SCOPES_BY_METHOD`` names."""
    if toolkit_in_use():
        from oauth2_provider.settings import oauth2_settings

        return {str(name): str(text) for name, text in oauth2_settings.SCOPES.items()}
    from mcp_endpoint.conf import mcp_settings

    by_method = mcp_settings.SCOPES_BY_METHOD or {}  # None: no default policy, no scopes
    names = sorted({str(n) for names in by_method.values() for n in names})
    return {name: DEFAULT_DESCRIPTIONS.get(name, name) for name in names}


def declares_scopes(view: Any) -> bool:
    """Whether the view has a scope policy of its own (which then wins over the default)."""
    if any(getattr(view, name, None) is not None for name in SCOPE_ATTRIBUTES):
        return True
    return any(_is_scope_permission(p) for p in view.get_permissions())


def _is_scope_permission(permission: Any) -> bool:
    if is_toolkit_class(type(permission), SCOPE_PERMISSIONS):
        return True
    # DRF's composed permissions (A & B, A | B, ~A) hold their operands as op1 / op2.
    return any(
        _is_scope_permission(getattr(permission, operand))
        for operand in ("op1", "op2")
        if getattr(permission, operand, None) is not None
    )


def default_scopes(
    view: Any, method: str, by_method: Mapping[str, Iterable[str]] | None
) -> frozenset[str]:
    """What the default policy asks of one request to a view that declares no policy."""
    by_action = getattr(view, "required_scopes_by_action", None)
    action = getattr(view, "action", None)
    if isinstance(by_action, Mapping) and action in by_action:
        return frozenset(by_action[action])
    if by_method is None:
        return frozenset()
    return frozenset(by_method.get(method.upper(), by_method.get("*", ())))


def held_scopes(auth: Any) -> frozenset[str] | None:
    """The scopes the auth object of a request holds (an API key's, an access token's:
    their ``scope`` text), or None for one that carries no scopes (a session, a DRF token)."""
    scope = getattr(auth, "scope", None)
    return frozenset(scope.split()) if isinstance(scope, str) else None


def refusal(
    view: Any,
    method: str,
    held: frozenset[str] | None,
    by_method: Mapping[str, Iterable[str]] | None,
) -> str | None:
    """Why a credential holding ``held`` may not call ``method`` on ``view`` under the
    default policy; None when it may (it carries no scopes, the view has a policy of its
    own, or it holds every scope asked for). :class:`mcp_endpoint.permissions.HasScopes`
    is the one caller that refuses with it."""
    if held is None or declares_scopes(view):
        return None
    missing = default_scopes(view, method, by_method) - held
    if not missing:
        return None
    return (
        f"This action needs the scope(s) {' '.join(sorted(missing))}; the credential "
        f"holds {' '.join(sorted(held)) or 'none'}."
    )
