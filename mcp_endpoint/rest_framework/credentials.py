"""Which of a view's authentication classes can take the caller's credential.

The view's own ``authentication_classes`` decide who is calling, as they do for REST. The
transport authenticated the caller with one of the endpoint's classes; the view can take
that credential when one of its classes is that class, a base of it or a subclass of it
(both then read the same ``Authorization`` header the same way). A view that has none
of them cannot authenticate the caller: its tools are hidden from that caller, and a
call is refused with a message that says which credentials the view takes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_endpoint.authentication import Credential

# What a user would call the credential each well-known class reads, by class name (so
# that optional packages need not be installed to be named). Subclasses inherit a name.
KIND_NAMES = {
    "SessionAuthentication": "browser sessions",
    "BasicAuthentication": "HTTP Basic passwords",
    "TokenAuthentication": "DRF tokens",
    "RemoteUserAuthentication": "a front server's REMOTE_USER",
    "APIKeyAuthentication": "API keys",
    "OAuth2Authentication": "OAuth access tokens",
    "JWTAuthentication": "JSON Web Tokens",
    "JWTStatelessUserAuthentication": "JSON Web Tokens",
}


def related(cls: type[Any], other: type[Any]) -> bool:
    return issubclass(cls, other) or issubclass(other, cls)


def takes(classes: Iterable[type[Any]], credential: Credential | None) -> bool:
    """Whether a view with these authentication classes can authenticate ``credential``.

    No credential (an endpoint that needs none), or one whose class is not known, is left
    to the view.
    """
    authenticator = getattr(credential, "authenticator", None)
    if authenticator is None:
        return True
    return any(related(type(authenticator), cls) for cls in classes)


def kind_name(cls: type[Any]) -> str:
    for base in cls.__mro__:
        if base.__name__ in KIND_NAMES:
            return KIND_NAMES[base.__name__]
    return cls.__name__


def accepted_kinds(classes: Sequence[type[Any]]) -> str:
    """``"browser sessions"``, ``"DRF tokens or browser sessions"``: for messages."""
    names = list(dict.fromkeys(kind_name(cls) for cls in classes))
    if not names:
        return "no credentials at all"
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def refusal(classes: Sequence[type[Any]], credential: Credential | None) -> str | None:
    """Why a view with these classes cannot take ``credential``; None when it can."""
    if takes(classes, credential):
        return None
    return f"This action accepts {accepted_kinds(classes)} only"
