"""What a credential is, apart from how it is found: the :class:`Credential` a request's
caller is known by, and what a person calls the credential each authentication class reads.

The authentication classes that look keys and tokens up (:mod:`mcp_endpoint.authentication`)
make credentials; the tool machinery, the DRF adapter among it, only reads them, and so
imports this module rather than the look-up's models, caches and memory of keys.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

# The kind an auth object says it is (``mcp_credential_kind``): the app's API key models
# say "api_key" (:class:`mcp_endpoint.models.AbstractAPIKey`, which a swapped key model
# derives from).
API_KEY = "api_key"


def is_api_key(auth: Any) -> bool:
    """Whether ``auth``, a credential's auth object, is one of the app's API keys."""
    return getattr(auth, "mcp_credential_kind", None) == API_KEY


@dataclass(frozen=True)
class Credential:
    """Who is calling and with what: the user, the auth object, and the scopes it holds.

    ``scopes`` is None for credentials that carry no scopes (a session, say): nothing is
    hidden for them, and a view's scope permission decides each call.
    """

    user: Any
    auth: Any
    scopes: frozenset[str] | None
    authenticator: Any = None

    @property
    def kind(self) -> str:
        if is_api_key(self.auth):
            return API_KEY
        if hasattr(self.auth, "scope"):
            return "oauth_token"
        return "other"

    def allows(self, required: Iterable[str]) -> bool:
        return self.scopes is None or set(required) <= self.scopes

    def ident(self) -> str:
        """Whom a per-credential limit counts for: the key or token itself, else the user."""
        if is_api_key(self.auth):
            return f"api_key:{self.auth.prefix}"
        if hasattr(self.auth, "pk") and hasattr(self.auth, "scope"):
            return f"oauth_token:{self.auth.pk}"
        if self.anonymous:
            return f"auth:{self.auth_reference()}"
        return f"user:{getattr(self.user, 'pk', None)}"

    @property
    def anonymous(self) -> bool:
        """Whether the credential's user is anonymous: the product's class put the caller's
        identity in the auth object alone (a team token, say)."""
        return not getattr(self.user, "is_authenticated", False)

    def auth_reference(self) -> str:
        """The auth object of an anonymous credential, by its class and primary key when it
        is a model instance, else by a digest of its text: never the secret itself."""
        cls = type(self.auth)
        pk = getattr(self.auth, "pk", None)
        if pk is not None:
            return f"{cls.__module__}.{cls.__qualname__}:{pk}"
        # A token string, a claims dict: their text is stable from request to request.
        text = self.auth if isinstance(self.auth, (str, bytes)) else repr(self.auth)
        raw = text.encode() if isinstance(text, str) else text
        return f"{cls.__qualname__}:{hashlib.sha256(raw).hexdigest()[:24]}"

    def label(self) -> str:
        """A log-safe name for the credential: never the secret itself."""
        if is_api_key(self.auth):
            return f"api_key:{self.auth.prefix}"
        if hasattr(self.auth, "pk") and hasattr(self.auth, "scope"):
            return f"oauth_token:{self.auth.pk}"
        return self.kind


# What a user would call the credential each well-known class reads, by class name (so
# that optional packages need not be installed to be named). Subclasses inherit a name.
KIND_NAMES = {
    "SessionAuthentication": "browser sessions",
    "BasicAuthentication": "HTTP Basic passwords",
    "TokenAuthentication": "DRF tokens",
    "RemoteUserAuthentication": "a front server's REMOTE_USER",
    "APIKeyAuthentication": "API keys",
    "OAuth2Authentication": "OAuth access tokens",
    "OAuth2TokenAuthentication": "OAuth access tokens",
    "JWTAuthentication": "JSON Web Tokens",
    "JWTStatelessUserAuthentication": "JSON Web Tokens",
}


def kind_name(cls: type[Any]) -> str:
    """What a user calls the credential ``cls`` reads, for messages.

    A class's own ``mcp_credential_name`` (``"product API tokens"``) comes first, then the
    name of a well-known class it is or derives from, then its class name.
    """
    own = getattr(cls, "mcp_credential_name", None)
    if isinstance(own, str) and own:
        return own
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
