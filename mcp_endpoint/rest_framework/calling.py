"""Calling a viewset action for a tool: the inner request and the view that answers it.

A tool call becomes a real Django request (method, path, query string, JSON body) made
from the MCP request (host, scheme, client address, headers, cookies), dispatched to a
subclass of the host's viewset. The subclass differs from the viewset only through DRF's
documented hooks, so that one MCP request costs what one REST request costs:

- :meth:`get_authenticators`: when one of the view's own authentication classes already
  authenticated the caller at the transport, its result is reused instead of looked up a
  second time (a second look-up would also refuse an OAuth token bound to the MCP
  endpoint, since the view's URL is another resource);
- :meth:`get_throttles`: throttles whose counter the transport already advanced for this
  HTTP request are not counted again;
- :meth:`get_permissions`: the scope policy (:class:`~mcp_endpoint.permissions.HasScopes`,
  with the endpoint's ``SCOPES_BY_METHOD``) comes first, as the app's authentication
  classes apply it on REST, unless the view lists it itself: REST and a tool call are
  refused for their scopes by the same object.

What the view needs to know of the call travels as an init argument of the view
(:class:`Caller`), the way ``as_view(**initkwargs)`` hands attributes to a Django view.

The inner request takes the product's whole request path for its URL
(:class:`ToolRequestHandler`): the product's ``MIDDLEWARE`` (less the few that have no
meaning for a request made inside another, :data:`ALWAYS_SKIPPED`), URL resolution as
Django does it (``request.urlconf`` set by a middleware included), ``process_view``,
``process_exception``, template-response and response middleware. Only the resolved
view is swapped: the tool's subclass answers, with the kwargs the resolution gave.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from django.conf import settings as django_settings
from django.contrib.auth import get_user
from django.core.exceptions import ImproperlyConfigured
from django.core.handlers.wsgi import WSGIRequest
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.urls import Resolver404, resolve
from django.utils.functional import SimpleLazyObject
from rest_framework.authentication import BaseAuthentication
from rest_framework.permissions import BasePermission
from rest_framework.throttling import BaseThrottle, SimpleRateThrottle

from mcp_endpoint import permissions
from mcp_endpoint.conf import mcp_settings
from mcp_endpoint.rest_framework.credentials import stands_for
from mcp_endpoint.rest_framework.filters import LOOKUPS_ARGUMENT
from mcp_endpoint.rest_framework.handler import ToolView, handler_for, tool_middleware
from mcp_endpoint.rest_framework.spec import ITEMS_ARGUMENT, JSON
from mcp_endpoint.tools import ToolError

if TYPE_CHECKING:
    from rest_framework.request import Request

    from mcp_endpoint.credential import Credential
    from mcp_endpoint.rest_framework.spec import ActionSpec

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH"})
# What the inner request does not take from the MCP request: the MCP headers, the body's
# description, and what would make the product's middleware compress the answer or answer
# 304 Not Modified (GZipMiddleware, ConditionalGetMiddleware), which the tool reads itself.
LEFT_OUT_OF_INNER_REQUESTS = (
    "HTTP_MCP_",
    "wsgi.",
    "CONTENT_",
    "HTTP_ACCEPT_ENCODING",
    "HTTP_IF_",
    "HTTP_RANGE",
)


@dataclass(frozen=True)
class Caller:
    """Who calls the view, what the transport already counted for this request, and the
    endpoint's scope policy."""

    credential: Credential | None
    counted_throttle_keys: frozenset[str] = frozenset()
    scope_policy: permissions.HasScopes | None = None


def tool_view_class(viewset: type[Any]) -> type[Any]:
    """The viewset as it runs a tool call (see the module's docstring)."""

    def get_authenticators(self: Any) -> list[BaseAuthentication]:
        authenticators: list[BaseAuthentication] = viewset.get_authenticators(self)
        credential = self.caller.credential if self.caller is not None else None
        if credential is None:
            return authenticators
        return [verified(a, credential) if took(credential, a) else a for a in authenticators]

    def get_permissions(self: Any) -> list[BasePermission]:
        own: list[BasePermission] = viewset.get_permissions(self)
        policy = self.caller.scope_policy if self.caller is not None else None
        if policy is None or permissions.lists(own):
            return own
        return [policy, *own]

    def get_throttles(self: Any) -> list[BaseThrottle]:
        throttles: list[BaseThrottle] = viewset.get_throttles(self)
        counted = self.caller.counted_throttle_keys if self.caller is not None else ()
        if not counted:
            return throttles
        return [
            t
            for t in throttles
            if not (
                isinstance(t, SimpleRateThrottle) and t.get_cache_key(self.request, self) in counted
            )
        ]

    return type(
        viewset.__name__,
        (viewset,),
        {
            "caller": None,
            "get_authenticators": get_authenticators,
            "get_permissions": get_permissions,
            "get_throttles": get_throttles,
            "__module__": viewset.__module__,
            "__qualname__": viewset.__qualname__,
            "__doc__": viewset.__doc__,
        },
    )


def took(credential: Credential, authenticator: BaseAuthentication) -> bool:
    """Whether the transport authenticated ``credential`` with ``authenticator``'s class (a
    subclass of it, or the app's OAuth class for the toolkit's, whose check it runs)."""
    cls = type(credential.authenticator)
    return isinstance(credential.authenticator, type(authenticator)) or stands_for(
        cls, type(authenticator)
    )


def verified(authenticator: BaseAuthentication, credential: Credential) -> BaseAuthentication:
    """An instance of the view's own authentication class that answers with ``credential``.

    Only used when ``credential`` was authenticated by that very class (or a subclass) at
    the transport, for the same ``Authorization`` header: the class already said yes.
    """
    instance = _verified_class(type(authenticator))()
    instance.__dict__.update(authenticator.__dict__)
    instance.credential = credential
    return instance


_verified_classes: dict[type[BaseAuthentication], type[Any]] = {}


def _verified_class(cls: type[BaseAuthentication]) -> type[Any]:
    def authenticate(self: Any, request: Request) -> tuple[Any, Any]:
        return self.credential.user, self.credential.auth

    if cls not in _verified_classes:
        _verified_classes[cls] = type(
            cls.__name__, (cls,), {"authenticate": authenticate, "__module__": cls.__module__}
        )
    return _verified_classes[cls]


def call_view(
    spec: ActionSpec,
    view_class: type[Any],
    arguments: Mapping[str, Any],
    http_request: HttpRequest,
    caller: Caller,
) -> tuple[HttpResponseBase, dict[str, str]]:
    """Dispatch one call to the view; the response and the URL kwargs it was given."""
    route = spec.route
    method = route.method
    kwargs = {
        **spec.fixed_kwargs,
        **{spec.path_arguments[n]: str(arguments[n]) for n in spec.path_arguments},
    }
    path = re.sub(
        r"{(\w+)}", lambda m: quote(kwargs.get(m.group(1), m.group(0)), safe=""), route.path
    )
    query = {
        spec.query_names.get(k, k): query_value(v, explode=k not in spec.comma_arguments)
        for k, v in arguments.items()
        if k in spec.query_arguments and v is not None
    }
    # The grouped lookups are query parameters like the others (their names were checked
    # against the filterset's when the arguments were validated).
    lookups = arguments.get(LOOKUPS_ARGUMENT) if spec.lookup_arguments else None
    if isinstance(lookups, Mapping):
        query.update({k: v for k, v in lookups.items() if k in spec.lookup_arguments})
    body: Any
    if spec.body_list:
        body = arguments.get(ITEMS_ARGUMENT)
    elif spec.body_nested:
        body = arguments.get("body")
    elif spec.body_arguments or method in WRITE_METHODS:
        body = {k: v for k, v in arguments.items() if k in spec.body_arguments}
    else:
        body = None
    # A text-only action (an HTML page) is asked for its text; every other for JSON.
    accept = spec.accept if spec.media_type == JSON else spec.media_type
    request = inner_request(http_request, method, path, query, body, accept=accept)
    actions = getattr(route.callback, "actions", None)
    initkwargs = {**route.callback.initkwargs, "caller": caller}
    view: Callable[..., HttpResponseBase] = (
        view_class.as_view(actions, **initkwargs)
        if actions is not None
        else view_class.as_view(**initkwargs)
    )
    try:
        if mcp_settings.TOOL_MIDDLEWARE:
            middleware = tool_middleware(
                mcp_settings.TOOL_MIDDLEWARE_SKIP, shares_session=hasattr(request, "session")
            )
            handler = handler_for(middleware)
            response = handler.answer(request, ToolView(view, route.callback, path))
        else:
            response = dispatch(view, request, path, route.callback, kwargs)
    except IntegrityError as exc:
        raise ToolError(
            "The change conflicts with existing data",
            code="conflict",
            detail=str(exc).splitlines()[0][:200],
        ) from exc
    if 300 <= response.status_code < 400:
        # A middleware (or the view) sends the REST client elsewhere, a sign-in page most
        # often: the action did not run, and a tool result cannot follow the redirect.
        raise ToolError(
            f"The product answers this action's URL with a redirect (HTTP "
            f"{response.status_code}) instead of running it",
            code="permission_denied",
            status=response.status_code,
            location=response.get("Location", ""),
        )
    return response, kwargs


def dispatch(
    view: Callable[..., HttpResponseBase],
    request: HttpRequest,
    path: str,
    callback: Any,
    kwargs: dict[str, str],
) -> HttpResponseBase:
    """The view called directly, without the product's middleware (``TOOL_MIDDLEWARE``
    off), with what URL resolution gives a REST request: NamespaceVersioning reads the
    namespace from it, and reverse() inside the view then stays in the route's namespace."""
    view_kwargs: dict[str, Any] = kwargs
    with contextlib.suppress(Resolver404):
        request.resolver_match = resolve(path)
        if request.resolver_match.func is callback:
            # The kwargs as the route's converters make them (an int for <int:user_pk>),
            # which the view compares and looks up exactly as it does for REST.
            view_kwargs = {**kwargs, **request.resolver_match.kwargs}
    return view(request, **view_kwargs)


def inner_request(
    request: HttpRequest,
    method: str,
    path: str,
    query: Mapping[str, Any],
    body: Any,
    *,
    accept: str = "application/json",
) -> HttpRequest:
    """A Django request for the view, made from the MCP request (host, scheme, client, auth).

    ``accept`` is its ``Accept`` header: JSON (or the text type of a text-only action), with
    the API version the view was described for when the view reads its version there
    (``AcceptHeaderVersioning``).
    """
    payload = b"" if body is None else json.dumps(body).encode("utf-8")
    environ = {
        k: v
        for k, v in request.META.items()
        if isinstance(k, str) and not k.startswith(LEFT_OUT_OF_INNER_REQUESTS)
    }
    environ.update(
        {
            "REQUEST_METHOD": method,
            "PATH_INFO": path,
            "SCRIPT_NAME": request.META.get("SCRIPT_NAME", ""),
            "QUERY_STRING": urlencode({k: query_value(v) for k, v in query.items()}, doseq=True),
            "HTTP_ACCEPT": accept,
            "wsgi.input": io.BytesIO(payload),
            "wsgi.url_scheme": request.scheme,
            "wsgi.version": (1, 0),
            "wsgi.errors": request.META.get("wsgi.errors", io.StringIO()),
            "wsgi.multithread": True,
            "wsgi.multiprocess": True,
            "wsgi.run_once": False,
        }
    )
    if body is not None:
        environ["CONTENT_TYPE"] = "application/json"
        environ["CONTENT_LENGTH"] = str(len(payload))
    inner = WSGIRequest(environ)
    # What middleware would have set on a REST request with the same headers and cookies:
    # the session, and the user *of that session*. Never the MCP caller: a view that
    # trusts request.user (SessionAuthentication does) must see a browser session only
    # when there is one.
    if hasattr(request, "session"):
        inner.session = request.session
        if hasattr(request, "user"):
            inner.user = SimpleLazyObject(lambda: get_user(inner))  # type: ignore[assignment]
    if "django.contrib.messages" in django_settings.INSTALLED_APPS:
        from django.contrib.messages.middleware import MessageMiddleware

        # The message storage, as Django's middleware gives a request one. A storage that
        # needs the session, on a request that has none (a host without
        # SessionMiddleware), is left out: the REST request would have no messages either.
        with contextlib.suppress(ImproperlyConfigured):
            MessageMiddleware(lambda request: HttpResponse()).process_request(inner)
    return inner


def query_value(value: Any, *, explode: bool = True) -> Any:
    """A value as the query string carries it: booleans as ``true``/``false``; a list as
    repeated parameters (``explode``), or as one comma-separated value, as an OpenAPI
    parameter of style ``form`` with ``explode: false`` says (``?id__in=1,3``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        values = [query_value(v) for v in value]
        return values if explode else ",".join(str(v) for v in values)
    return value
