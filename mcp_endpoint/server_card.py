"""The server card (SEP-2127, experimental): what the endpoint is, before a client connects.

At ``<endpoint URL>/server-card`` (``/mcp/server-card``), when ``SERVER_CARD`` is on: the
server's name, version and title, the streamable HTTP remote with its protocol revisions
and how it authenticates, its capabilities and extensions. It is public by design, so it
holds no tool, resource or prompt: those depend on the caller's scopes and are listed
after connecting. ``SERVER_CARD`` is ``False`` (off, 404), ``True``, or a dict of fields
to add or replace (a reverse-DNS ``name`` such as ``"com.example/tracker"``,
``description``, ``websiteUrl``, ``repository``, ``icons``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

from django.http import HttpRequest, HttpResponse, JsonResponse

from mcp_endpoint import compat
from mcp_endpoint.conf import SERVER_CARD_FIELDS
from mcp_endpoint.resource import resource_url

if TYPE_CHECKING:
    from mcp_endpoint.interfaces import EndpointLike

SCHEMA = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
MAX_AGE = 3600


def card(endpoint: EndpointLike, request: HttpRequest) -> dict[str, Any]:
    """The card of ``endpoint``, with its URL as ``request`` reached it."""
    settings = endpoint.settings
    configured = settings.SERVER_CARD if isinstance(settings.SERVER_CARD, Mapping) else {}
    schemes = ["bearer"]
    if compat.oauth_enabled():
        schemes.append("oauth2")
    body: dict[str, Any] = {
        "$schema": SCHEMA,
        "name": settings.SERVER_NAME,
        "version": settings.SERVER_VERSION,
    }
    if settings.SERVER_TITLE:
        body["title"] = settings.SERVER_TITLE
    body["remotes"] = [
        {
            "type": "streamable-http",
            "url": resource_url(endpoint, request, endpoint_path_of(request)),
            "supportedProtocolVersions": list(endpoint.features.supported_versions()),
            "authentication": {"required": bool(settings.REQUIRE_CREDENTIAL), "schemes": schemes},
        }
    ]
    body["capabilities"] = endpoint.features.capabilities()
    body.update({k: v for k, v in configured.items() if k in SERVER_CARD_FIELDS})
    return body


def endpoint_path_of(request: HttpRequest) -> str:
    """The endpoint's path: the card's own, less ``/server-card``."""
    return request.path.removesuffix("/server-card")


def server_card_view(request: HttpRequest, *, endpoint: EndpointLike) -> HttpResponse:
    """GET the card (404 while ``SERVER_CARD`` is off), readable from any origin."""
    if request.method == "OPTIONS":
        response: HttpResponse = HttpResponse(status=204)
    elif request.method not in ("GET", "HEAD"):
        response = JsonResponse({"error": "method_not_allowed"}, status=405)
        response["Allow"] = "GET, HEAD, OPTIONS"
    elif not endpoint.settings.SERVER_CARD:
        response = JsonResponse({"error": "not_found"}, status=404)
    else:
        response = JsonResponse(card(endpoint, request), json_dumps_params={"indent": 2})
        response["Cache-Control"] = f"public, max-age={MAX_AGE}"
    # Public, read-only metadata: browser clients on any origin may read it (SEP-2127).
    response["Access-Control-Allow-Origin"] = "*"
    response["Access-Control-Allow-Methods"] = "GET"
    response["Access-Control-Allow-Headers"] = "Content-Type"
    return response


class Reader(Protocol):
    """What :func:`read_card` needs of ``mcp_doctor``'s walk."""

    @property
    def resource(self) -> str: ...

    def get(self, url: str) -> Any: ...

    def ok(self, what: str) -> None: ...

    def warning(self, id: str, message: str, hint: str = "") -> None: ...


def read_card(doctor: Reader) -> None:
    """``mcp_doctor``'s look at the card: off is fine; on, it must name this endpoint."""
    url = doctor.resource + "/server-card"
    answer = doctor.get(url)
    if answer.status == 404:
        doctor.ok("server card: off")
        return
    try:
        body = answer.json()
    except ValueError:
        body = None
    remotes = body.get("remotes") if isinstance(body, dict) else None
    urls = [r.get("url") for r in remotes or [] if isinstance(r, dict)]
    if answer.status != 200 or not isinstance(body, dict) or doctor.resource not in urls:
        doctor.warning(
            "W140",
            f"The server card at {url} answered {answer.status} without a remote at "
            f"{doctor.resource}: a client that reads it first is sent elsewhere or nowhere.",
            'Set MCP_ENDPOINT["RESOURCE_URL"] to the public URL, or turn SERVER_CARD off.',
        )
        return
    doctor.ok(f"server card: {body.get('name')} {body.get('version')}")
