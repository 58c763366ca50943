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
from typing import Any

from mcp_endpoint.compat import TOOLKIT_APP
from mcp_endpoint.credential import Credential, accepted_kinds


def related(cls: type[Any], other: type[Any]) -> bool:
    return (
        issubclass(cls, other)
        or issubclass(other, cls)
        or stands_for(cls, other)
        or stands_for(other, cls)
    )


def stands_for(cls: type[Any], other: type[Any]) -> bool:
    """Whether ``cls`` runs the check of ``other``, a class of the toolkit's, without deriving
    from it (so that it can be named where the toolkit is not installed): the app's OAuth
    class, and its subclasses, name that class in ``toolkit_counterpart``."""
    counterpart = getattr(cls, "toolkit_counterpart", None)
    return (
        counterpart is not None
        and other.__name__ == counterpart
        and other.__module__.split(".")[0] == TOOLKIT_APP
    )


def takes(classes: Iterable[type[Any]], credential: Credential | None) -> bool:
    """Whether a view with these authentication classes can authenticate ``credential``.

    No credential (an endpoint that needs none), or one whose class is not known, is left
    to the view.
    """
    authenticator = getattr(credential, "authenticator", None)
    if authenticator is None:
        return True
    return any(related(type(authenticator), cls) for cls in classes)


def refusal(classes: Sequence[type[Any]], credential: Credential | None) -> str | None:
    """Why a view with these classes cannot take ``credential``; None when it can."""
    if takes(classes, credential):
        return None
    return f"This action accepts {accepted_kinds(classes)} only"
