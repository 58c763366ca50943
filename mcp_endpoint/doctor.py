"""What ``manage.py mcp_doctor`` checks: a deployment, seen the way an MCP client sees it.

A :class:`Doctor` walks the path a client walks: the 401 challenge, the protected-resource
metadata it points at, the authorisation server's metadata, the registration endpoint and
PKCE; with a credential, both protocol eras' first requests, ``tools/list``, every schema,
and a call per tool with arguments its schema refuses (so the server refuses it before the
tool runs); then CORS for browser clients. Each problem is a :class:`Finding` with a stable
id, a hint and a link to ``docs/operations.md``.

It speaks HTTP through a small :class:`HTTP` interface: :class:`URLLibHTTP` for a running
server, :class:`DjangoClientHTTP` for the host's own URLconf in process.
"""

from __future__ import annotations

import http.client
import json
import math
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import urlsplit, urlunsplit

from mcp_endpoint import server_card
from mcp_endpoint.protocol.tasks import EXTENSION as TASKS_EXTENSION
from mcp_endpoint.protocol.versions import (
    LEGACY_VERSIONS,
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    MODERN_VERSIONS,
)
from mcp_endpoint.schema import has_ref_or_type_array

DOCS = "docs/operations.md"
LEGACY_VERSION = LEGACY_VERSIONS[-1]
MODERN_VERSION = MODERN_VERSIONS[-1]
# The MCP Inspector's own origin: the browser client most people try first.
BROWSER_ORIGIN = "http://localhost:6274"
BROWSER_HEADERS = ("authorization", "content-type", "mcp-protocol-version", "mcp-session-id")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
CHALLENGE_PARAM = re.compile(r'(\w+)="([^"]*)"')
# Seconds one tool's arguments may take to validate when its schema holds regular
# expressions. The schema is the server's: a pattern such as ^(a+)+$ backtracks for ever
# under Python's re, which no thread can interrupt (it holds the interpreter), so such a
# schema is validated in a child process that is killed at the deadline.
PATTERN_SECONDS = 5.0
# Deeper schemas are a finding, not checked: the checks recurse.
MAX_SCHEMA_DEPTH = 64
# The most items or characters an example asks for, whatever minItems or minLength say.
MAX_EXAMPLE_SIZE = 1000
# What the child process runs: the same validation as in process, its answer as JSON.
VALIDATE_IN_CHILD = """
import json, re, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
schema, instance = json.load(sys.stdin)
try:
    validator = Draft202012Validator(schema, format_checker=Draft202012Validator.FORMAT_CHECKER)
    problems = [e.message for e in validator.iter_errors(instance)]
except (SchemaError, re.error):
    problems = None
json.dump(problems, sys.stdout)
"""
# Sample values for string formats, for the arguments built from a schema.
FORMAT_SAMPLES = {
    "date": "2026-01-31",
    "date-time": "2026-01-31T12:00:00Z",
    "time": "12:00:00",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "uuid": "00000000-0000-4000-8000-000000000000",
    "ipv4": "192.0.2.1",
    "ipv6": "2001:db8::1",
}


@dataclass(frozen=True)
class Finding:
    """One problem: ``level`` is ``"error"`` (clients fail) or ``"warning"`` (some may)."""

    id: str
    level: str
    message: str
    hint: str = ""

    @property
    def docs(self) -> str:
        if self.id.startswith("mcp_doctor."):
            return f"{DOCS}#{self.id.lower().replace('.', '')}"
        return "docs/configuration.md#system-checks"


@dataclass
class Response:
    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        try:
            return json.loads(self.body)
        except (ValueError, RecursionError):  # a hostile server's body, nested past the limit
            return None

    def header(self, name: str) -> str:
        return self.headers.get(name.lower(), "")


class HTTP(Protocol):
    def request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
    ) -> Response: ...

    def listen(
        self, url: str, headers: Mapping[str, str], body: bytes, hold: float
    ) -> tuple[Response, bool]:
        """POST ``body``, read the answer's first event; ``(answer so far, held)``, where
        held says whether the stream was still open ``hold`` seconds later."""
        ...


class NoRedirect(urllib.request.HTTPRedirectHandler):
    # A redirect is itself a finding: clients do not repeat a POST through one.
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


class URLLibHTTP:
    """HTTP to a running server, with the standard library; redirects are not followed."""

    def __init__(self, timeout: float = 15.0) -> None:
        self.timeout = timeout
        self.opener = urllib.request.build_opener(NoRedirect)

    def request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
    ) -> Response:
        try:
            request = urllib.request.Request(url, data=body, headers=dict(headers), method=method)
        except ValueError as exc:  # not a URL urllib can fetch ("z", "ftp://…")
            return Response(0, {}, str(exc).encode())
        try:
            with self.opener.open(request, timeout=self.timeout) as answer:
                return Response(
                    answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
                )
        except urllib.error.HTTPError as exc:
            return Response(exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read())
        except (urllib.error.URLError, OSError, ValueError) as exc:
            # ValueError: http.client's InvalidURL (a port that is not a number, say).
            return Response(0, {}, str(exc).encode())

    def listen(
        self, url: str, headers: Mapping[str, str], body: bytes, hold: float
    ) -> tuple[Response, bool]:
        parts = urlsplit(url)
        secure = parts.scheme == "https"
        kind = http.client.HTTPSConnection if secure else http.client.HTTPConnection
        try:
            connection = kind(parts.netloc, timeout=self.timeout)
        except ValueError as exc:
            return Response(0, {}, str(exc).encode()), False
        try:
            connection.request("POST", parts.path or "/", body=body, headers=dict(headers))
            answer = connection.getresponse()
            found = {k.lower(): v for k, v in answer.getheaders()}
            if answer.status != 200 or "text/event-stream" not in found.get("content-type", ""):
                return Response(answer.status, found, answer.read()), False
            read = first_event(iter(answer.readline, b""))
            if connection.sock is not None:
                connection.sock.settimeout(hold)
            try:
                # Keepalives may come; the end of the stream must not.
                while answer.readline():
                    pass
                held = False
            except TimeoutError:
                held = True
            return Response(answer.status, found, read), held
        except (OSError, http.client.HTTPException) as exc:
            return Response(0, {}, str(exc).encode()), False
        finally:
            connection.close()


def first_event(lines: Any) -> bytes:
    """The lines of an event stream up to the end of its first event."""
    read = b""
    for line in lines:
        read += line
        if read.strip() and line in (b"\n", b"\r\n", b""):
            break
    return read


class DjangoClientHTTP:
    """HTTP to the host's own URLconf through Django's test client, in process."""

    def __init__(self) -> None:
        from django.test import Client

        self.client = Client(raise_request_exception=False)

    def request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None = None
    ) -> Response:
        parts = urlsplit(url)
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        extra = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        answer = self.client.generic(
            method,
            path,
            body or b"",
            content_type=headers.get("Content-Type", "application/octet-stream"),
            secure=parts.scheme == "https",
            headers=extra,
            HTTP_HOST=parts.netloc,
        )
        content = b"".join(answer.streaming_content) if answer.streaming else answer.content  # type: ignore[attr-defined]
        return Response(answer.status_code, {k.lower(): v for k, v in answer.items()}, content)

    def listen(
        self, url: str, headers: Mapping[str, str], body: bytes, hold: float
    ) -> tuple[Response, bool]:
        # In process the test client serves WSGI: a stream it returns has ended.
        answer = self.request("POST", url, headers, body)
        events = answer.body.splitlines(keepends=True)
        return Response(answer.status, answer.headers, first_event(iter(events))), False


def http_url(value: Any) -> str | None:
    """``value`` when it is an absolute http(s) URL with a host that parses, else None."""
    if not isinstance(value, str):
        return None
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises ValueError on a port that is not one
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    return value


@dataclass
class Probe:
    """What a :class:`Doctor` holds while it walks: where it goes, with what credential,
    what it found and passed, and the requests it sends."""

    http: HTTP
    url: str
    credential: str | None = None
    public_url: str | None = None
    findings: list[Finding] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    session_id: str | None = None
    next_id: int = 0
    pattern_seconds: float = PATTERN_SECONDS
    # Asked for: a long-running tool to run as a task to its end (with these arguments,
    # within task_seconds), and a resource URI to listen to (held for hold_seconds).
    task_tool: str | None = None
    task_arguments: dict[str, Any] = field(default_factory=dict)
    task_seconds: float = 60.0
    subscribe_uri: str | None = None
    hold_seconds: float = 2.0

    # -- bookkeeping -----------------------------------------------------------------------

    def error(self, id: str, message: str, hint: str = "") -> None:
        self.findings.append(Finding(f"mcp_doctor.{id}", "error", message, hint))

    def warning(self, id: str, message: str, hint: str = "") -> None:
        self.findings.append(Finding(f"mcp_doctor.{id}", "warning", message, hint))

    def ok(self, what: str) -> None:
        self.passed.append(what)

    def malformed(self, where: str, value: Any) -> None:
        self.error(
            "E014",
            f"{where} is {value!r}, not an absolute http(s) URL: clients stop there.",
            PROXY_HINT,
        )

    @property
    def resource(self) -> str:
        """The URL a user types into a client: the RFC 8707 resource the documents must name."""
        return (self.public_url or self.url).rstrip("/")

    def proxy_headers(self) -> dict[str, str]:
        if not self.public_url:
            return {}
        public = urlsplit(self.public_url)
        return {"X-Forwarded-Proto": public.scheme, "X-Forwarded-Host": public.netloc}

    def reachable(self, url: str) -> str:
        """``url`` as fetched: a URL on the public host, or on the server's own host with the
        scheme the proxy announced, goes to the server behind the proxy."""
        if not self.public_url:
            return url
        public, target, parts = urlsplit(self.public_url), urlsplit(self.url), urlsplit(url)
        if parts.netloc not in (public.netloc, target.netloc):
            return url
        return urlunsplit(parts._replace(scheme=target.scheme, netloc=target.netloc))

    def get(self, url: str) -> Response:
        headers = {"Accept": "application/json", **self.proxy_headers()}
        return self.http.request("GET", self.reachable(url), headers)

    def rpc(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        credential: bool = True,
        headers: Mapping[str, str] | None = None,
        notification: bool = False,
    ) -> Response:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if not notification:
            self.next_id += 1
            message["id"] = self.next_id
        if params is not None:
            message["params"] = params
        sent = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            **self.proxy_headers(),
            **(headers or {}),
        }
        if credential and self.credential:
            sent["Authorization"] = f"Bearer {self.credential}"
        if self.session_id:
            sent["Mcp-Session-Id"] = self.session_id
        return self.http.request("POST", self.url, sent, json.dumps(message).encode())

    def modern_rpc(
        self, method: str, params: dict[str, Any], *, name: str | None = None, tasks: bool = False
    ) -> Response:
        """A 2026-07-28 request (no session), its ``_meta`` mirrored in the headers."""
        meta = {
            META_PROTOCOL_VERSION: MODERN_VERSION,
            META_CLIENT_CAPABILITIES: {"extensions": {TASKS_EXTENSION: {}}} if tasks else {},
            META_CLIENT_INFO: {"name": "mcp_doctor", "version": "1"},
        }
        headers = {"MCP-Protocol-Version": MODERN_VERSION, "Mcp-Method": method}
        if name is not None:
            headers["Mcp-Name"] = name
        saved, self.session_id = self.session_id, None
        try:
            return self.rpc(method, {**params, "_meta": meta}, headers=headers)
        finally:
            self.session_id = saved


class AuthorizationChecks(Probe):
    """The OAuth discovery a client walks before its first request: the 401 challenge,
    the protected-resource metadata, the authorisation server's metadata."""

    def check_challenge(self) -> str | None:
        params = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp_doctor", "version": "1"},
        }
        answer = self.rpc("initialize", params, credential=False)
        if answer.status == 0:
            self.error(
                "E001", f"{self.url} is not reachable: {answer.body.decode(errors='replace')}"
            )
            return None
        if 300 <= answer.status < 400:
            self.error(
                "E002",
                f"{self.url} answers {answer.status} to {answer.header('location')}: clients do "
                "not repeat a POST through a redirect.",
                'Mount the endpoint with path("mcp", site.urls), which answers /mcp and /mcp/.',
            )
            return None
        if answer.status != 401 and not answers_as_mcp(answer):
            media = answer.header("content-type") or "no content type"
            self.error(
                "E003",
                f"{self.url} answers {answer.status} ({media}) where a client expects 401 (no "
                "credential) or an MCP answer: the path may be routed elsewhere, to a view "
                f"that is not the endpoint{routed_to(urlsplit(self.url).path)}.",
                ROUTED_ELSEWHERE_HINT,
            )
            return None
        if answer.status != 401:
            if answer.status == 200:
                self.warning(
                    "W003",
                    f"{self.url} answers without a credential, so clients never start OAuth.",
                    'Leave MCP_ENDPOINT["REQUIRE_CREDENTIAL"] at True on a product endpoint.',
                )
            else:
                self.error(
                    "E003",
                    f"{self.url} answers {answer.status} where a client expects 401 (no "
                    "credential) and then its MCP answers.",
                    "Is this the URL the endpoint is mounted at?",
                )
            return None
        challenge = answer.header("www-authenticate")
        found = dict(CHALLENGE_PARAM.findall(challenge))
        metadata_url = found.get("resource_metadata")
        if not challenge.lower().startswith("bearer") or not metadata_url:
            self.error(
                "E004",
                f"The 401 carries no Bearer challenge naming resource_metadata ({challenge!r}): "
                "clients cannot find where to sign in.",
                "Keep mcp_endpoint's authentication classes in MCP_ENDPOINT.",
            )
            return None
        if http_url(metadata_url) is None:
            self.malformed("The challenge's resource_metadata", metadata_url)
            return None
        self.ok("401 with a Bearer challenge naming resource_metadata")
        public = urlsplit(self.resource)
        named = urlsplit(metadata_url)
        if (named.scheme, named.netloc) != (public.scheme, public.netloc):
            self.error(
                "E005",
                f"The challenge points at {metadata_url}, not on {public.scheme}://"
                f"{public.netloc}, the origin users type.",
                PROXY_HINT,
            )
        return metadata_url

    def check_protected_resource(self, url: str) -> str | None:
        answer = self.get(url)
        document = answer.json()
        if answer.status != 200 or not isinstance(document, dict):
            self.error(
                "E006",
                f"The protected-resource metadata at {url} answers {answer.status}"
                f"{'' if isinstance(document, dict) else ', not JSON'}: the OAuth URLs are "
                "not mounted, and clients stop here.",
                'Add path("", include("mcp_endpoint.oauth.urls")) and path("o/", '
                'include("oauth2_provider.urls", namespace="oauth2_provider")) to the URLconf.',
            )
            return None
        self.ok(f"protected-resource metadata at {url}")
        resource = str(document.get("resource", "")).rstrip("/")
        if resource != self.resource:
            self.error(
                "E007",
                f"The metadata names the resource {document.get('resource')!r}, but users type "
                f"{self.resource!r}: clients refuse tokens for another resource.",
                PROXY_HINT,
            )
        servers = document.get("authorization_servers")
        if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
            self.error(
                "E008",
                "The protected-resource metadata names no authorization_servers.",
                "Keep django-oauth-toolkit's OAUTH2_PROVIDER settings (see docs/oauth.md).",
            )
            return None
        if http_url(servers[0]) is None:
            self.malformed("The first of the authorization_servers", servers[0])
            return None
        return servers[0]

    def check_authorization_server(self, issuer: str) -> None:
        parts = urlsplit(issuer)
        path = parts.path.rstrip("/")
        url = urlunsplit(parts._replace(path=f"/.well-known/oauth-authorization-server{path}"))
        answer = self.get(url)
        document = answer.json()
        if answer.status != 200 or not isinstance(document, dict):
            self.error(
                "E009",
                f"The authorization-server metadata at {url} answers {answer.status}"
                f"{'' if isinstance(document, dict) else ', not JSON'}.",
                'Add path("", include("mcp_endpoint.oauth.urls")) to the URLconf.',
            )
            return
        self.ok(f"authorization-server metadata at {url}")
        if str(document.get("issuer", "")).rstrip("/") != issuer.rstrip("/"):
            self.error(
                "E010",
                f"The authorization server says its issuer is {document.get('issuer')!r}, "
                f"not {issuer!r}: clients refuse the mismatch (RFC 8414).",
                PROXY_HINT,
            )
        methods = document.get("code_challenge_methods_supported")
        if not isinstance(methods, list) or "S256" not in methods:
            self.error(
                "E011",
                "The authorization server does not advertise PKCE with S256: MCP clients "
                "refuse to sign in.",
                'Set OAUTH2_PROVIDER["PKCE_REQUIRED"] = True.',
            )
        else:
            self.ok("PKCE S256 advertised")
        registration = document.get("registration_endpoint")
        if not registration:
            if not document.get("client_id_metadata_document_supported"):
                self.warning(
                    "W012",
                    "No registration_endpoint and no client ID metadata documents: clients "
                    "that register themselves (Claude, ChatGPT, VS Code) cannot sign in.",
                    'Set OAUTH2_PROVIDER["DCR_ENABLED"] or ["CIMD_ENABLED"] (docs/oauth.md).',
                )
            return
        if http_url(registration) is None:
            self.malformed("The registration_endpoint", registration)
            return
        # A GET asks nothing of the endpoint (registration is a POST): 404 means unmounted.
        mounted = self.get(str(registration))
        if mounted.status in (0, 404):
            self.error(
                "E013",
                f"The registration endpoint {registration} answers {mounted.status or 'nothing'}.",
                'Add path("", include("mcp_endpoint.oauth.urls")) to the URLconf.',
            )
        else:
            self.ok(f"registration endpoint at {registration}")


class ProtocolChecks(Probe):
    """The first requests of both protocol eras, and the long-running tools and live
    resources asked for."""

    def check_legacy_handshake(self) -> bool:
        params = {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": {},
            "clientInfo": {"name": "mcp_doctor", "version": "1"},
        }
        answer = self.rpc("initialize", params)
        body = answer.json()
        if answer.status == 401:
            self.error(
                "E020",
                "The key or token was refused (401).",
                "Is it revoked or expired? manage.py mcp_key list shows keys.",
            )
            return False
        result = body.get("result") if isinstance(body, dict) else None
        if answer.status != 200 or not isinstance(result, dict):
            self.error(
                "E021",
                f"initialize ({LEGACY_VERSION}) answered {answer.status}: "
                f"{answer.body[:300].decode(errors='replace')}",
                "Clients of the handshake era (most today) cannot connect.",
            )
            return False
        self.session_id = answer.header("mcp-session-id") or None
        self.ok(f"initialize: protocol {result.get('protocolVersion')}")
        done = self.rpc("notifications/initialized", notification=True)
        if done.status != 202:
            self.warning(
                "W022",
                f"notifications/initialized answered {done.status}, not 202.",
            )
        return True

    def check_modern_discover(self) -> dict[str, Any]:
        """``server/discover``; the capabilities it announces (empty when it failed)."""
        answer = self.modern_rpc("server/discover", {})
        body = answer.json()
        result = body.get("result") if isinstance(body, dict) else None
        if answer.status != 200 or not isinstance(result, dict):
            self.warning(
                "W023",
                f"server/discover ({MODERN_VERSION}) answered {answer.status}: clients of that "
                "revision fall back to the handshake, one round trip later.",
                'Keep "2026-07-28" in MCP_ENDPOINT["PROTOCOL_VERSIONS"].',
            )
            return {}
        versions = result.get("supportedVersions")
        versions = versions if isinstance(versions, list) else []
        self.ok(f"server/discover: {', '.join(str(v) for v in versions)}")
        capabilities = result.get("capabilities")
        return capabilities if isinstance(capabilities, dict) else {}

    def check_task(self, capabilities: dict[str, Any]) -> None:
        """Run ``task_tool`` as a task, polling ``tasks/get`` until it ends or
        ``task_seconds`` have passed."""
        tool = str(self.task_tool)
        extensions = capabilities.get("extensions")
        if not isinstance(extensions, dict) or TASKS_EXTENSION not in extensions:
            self.error(
                "E050",
                "server/discover does not announce the tasks extension: no task can run. The "
                "server announces it only where its task backend runs tasks and a worker of "
                "it has been seen.",
                "Start the task backend's workers (manage.py mcp_task_worker, or Celery's); "
                "see check mcp_endpoint.W091 and docs/deployment.md.",
            )
            return
        params = {"name": tool, "arguments": self.task_arguments}
        answer = self.modern_rpc("tools/call", params, name=tool, tasks=True)
        body = answer.json()
        result = body.get("result") if isinstance(body, dict) else None
        if not isinstance(result, dict):
            error = body.get("error") if isinstance(body, dict) else None
            self.error("E051", f"tools/call {tool} as a task answered {answer.status}: {error}.")
            return
        if result.get("resultType") != "task" or not isinstance(result.get("taskId"), str):
            self.warning(
                "W052",
                f"{tool} answered at once, not as a task: it is not a long-running tool "
                "(task_support is forbidden), so this ran no task.",
                'Name a tool registered with task_support="optional" or "required".',
            )
            return
        task_id = result["taskId"]
        started = time.monotonic()
        pause = min(max(float(result.get("pollIntervalMs") or 500) / 1000, 0.05), 2.0)
        while True:
            status = result.get("status")
            if status in ("completed", "failed", "cancelled"):
                break
            if time.monotonic() - started > self.task_seconds:
                self.error(
                    "E053",
                    f"The task of {tool} was still {status} after {self.task_seconds:g} s: "
                    "no worker ran it, or it takes longer.",
                    "Start the task backend's workers, or give it longer with --task-seconds.",
                )
                return
            time.sleep(pause)  # the server's pollIntervalMs, bounded by task_seconds
            polled = self.modern_rpc("tasks/get", {"taskId": task_id}, name=task_id, tasks=True)
            polled = polled.json()
            found = polled.get("result") if isinstance(polled, dict) else None
            if not isinstance(found, dict):
                self.error("E051", f"tasks/get for the task of {tool} answered {polled!r}.")
                return
            result = found
        seconds = time.monotonic() - started
        if status == "completed":
            outcome = result.get("result")
            failed = isinstance(outcome, dict) and outcome.get("isError") is True
            self.ok(
                f"task {tool}: completed in {seconds:.1f} s"
                + (" (with a tool error: check its arguments)" if failed else "")
            )
        else:
            error = result.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            self.error("E054", f"The task of {tool} ended {status}: {message}.")

    def check_subscription(self, capabilities: dict[str, Any]) -> None:
        """Listen to ``subscribe_uri`` (``subscriptions/listen``) and see the stream held."""
        uri = str(self.subscribe_uri)
        resources = capabilities.get("resources")
        if not isinstance(resources, dict) or resources.get("subscribe") is not True:
            self.error(
                "E055",
                "server/discover does not announce resources.subscribe: no client hears "
                "resource updates here. It is announced where the server holds a stream "
                "(ASGI) and updates reach every process (Redis, or one process).",
                "Serve under uvicorn (ASGI) with SUBSCRIPTIONS_REDIS_URL or a Redis CACHE; "
                "see docs/deployment.md.",
            )
            return
        self.next_id += 1
        meta = {
            META_PROTOCOL_VERSION: MODERN_VERSION,
            META_CLIENT_CAPABILITIES: {},
            META_CLIENT_INFO: {"name": "mcp_doctor", "version": "1"},
        }
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "subscriptions/listen",
            "params": {"_meta": meta, "notifications": {"resourceSubscriptions": [uri]}},
        }
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": MODERN_VERSION,
            "Mcp-Method": "subscriptions/listen",
            **self.proxy_headers(),
        }
        if self.credential:
            headers["Authorization"] = f"Bearer {self.credential}"
        answer, held = self.http.listen(
            self.url, headers, json.dumps(message).encode(), self.hold_seconds
        )
        event = sse_data(answer.body)
        params = event.get("params") if isinstance(event, dict) else None
        honoured = params.get("notifications") if isinstance(params, dict) else None
        listened = honoured.get("resourceSubscriptions") if isinstance(honoured, dict) else None
        if answer.status != 200 or not isinstance(listened, list) or uri not in listened:
            self.error(
                "E056",
                f"subscriptions/listen for {uri} answered {answer.status} without listening to "
                f"it ({answer.body[:200]!r}).",
                "The URI must be a live resource this credential may read.",
            )
        elif not held:
            self.error(
                "E057",
                f"The listen stream for {uri} ended at once: updates would never arrive.",
                "Serve the endpoint under an ASGI server (uvicorn); see docs/deployment.md.",
            )
        else:
            self.ok(f"subscriptions/listen {uri}: held open {self.hold_seconds:g} s")


class ToolChecks(Probe):
    """``tools/list``, every tool's schema, and a call each with arguments it refuses."""

    def list_tools(self) -> list[dict[str, Any]] | None:
        tools: list[dict[str, Any]] = []
        cursor: str | None = None
        for _ in range(100):
            answer = self.rpc("tools/list", {"cursor": cursor} if cursor else {})
            body = answer.json()
            result = body.get("result") if isinstance(body, dict) else None
            if answer.status != 200 or not isinstance(result, dict):
                self.error("E024", f"tools/list answered {answer.status}.")
                return None
            tools.extend(t for t in result.get("tools") or [] if isinstance(t, dict))
            cursor = result.get("nextCursor")
            if not cursor:
                break
        self.ok(f"tools/list: {len(tools)} tool(s)")
        if not tools:
            self.warning(
                "W025",
                "This credential sees no tools.",
                "Register viewsets or tools in an app's mcp.py; check the credential's scopes.",
            )
        return tools

    def check_tools(self, tools: list[dict[str, Any]]) -> None:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        for tool in tools:
            name = str(tool.get("name", ""))
            if not TOOL_NAME.match(name):
                self.error("E030", f"The tool name {name!r} is not 1-64 of [A-Za-z0-9_-].")
            if depth_of(tool) > MAX_SCHEMA_DEPTH:
                # Checking it would recurse past Python's limit; no client reads it either.
                self.error("E031", f"{name}: its schemas nest deeper than {MAX_SCHEMA_DEPTH}.")
                continue
            for key in ("inputSchema", "outputSchema"):
                schema = tool.get(key)
                if schema is None and key == "outputSchema":
                    continue
                if not isinstance(schema, dict) or schema.get("type") != "object":
                    self.error("E031", f"{name}: {key} has no object root; clients drop it.")
                    continue
                if has_ref_or_type_array(schema):
                    self.error(
                        "E031",
                        f"{name}: {key} holds a $ref or a type array, which some clients "
                        "(Gemini, clients that do not resolve references) refuse.",
                        "Pass the schema through mcp_endpoint.schema.portable().",
                    )
                try:
                    validator_for(schema).check_schema(schema)
                except SchemaError as exc:
                    self.error("E032", f"{name}: {key} is not a valid JSON Schema: {exc.message}")
            self.check_arguments(name, tool.get("inputSchema"))
        self.ok(f"{len(tools)} tool schema(s) checked")

    def check_arguments(self, name: str, schema: Any) -> None:
        """Build arguments from the input schema and validate them against it, as a client
        does before a call, without calling the tool: a schema no value satisfies, or whose
        formats a validator does not know, fails here."""
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        if not isinstance(schema, dict):
            return
        arguments = example_of(schema)
        if holds_patterns(schema):
            try:
                problems = validate_in_child(schema, arguments, self.pattern_seconds)
            except NoValidation as exc:
                self.warning(
                    "W034",
                    f"{name}: {exc}",
                    "Write patterns without nested repetition; look at the schema with "
                    "manage.py mcp_tools.",
                )
                return
        else:
            try:
                validator = Draft202012Validator(
                    schema, format_checker=Draft202012Validator.FORMAT_CHECKER
                )
                problems = [e.message for e in validator.iter_errors(arguments)]
            except SchemaError:
                problems = None
        if problems is None:
            return  # an invalid schema, reported above (E032), or a finding of its own
        if problems:
            self.warning(
                "W033",
                f"{name}: arguments built from the input schema do not validate against it "
                f"({problems[0]}): clients that build arguments the same way will fail.",
                "Look at the schema with manage.py mcp_tools; simplify what it requires.",
            )


class Doctor(AuthorizationChecks, ProtocolChecks, ToolChecks):
    """Runs the checks against ``url``; :meth:`run` returns the findings.

    ``public_url`` is the URL users type when ``url`` is the server behind a proxy: requests
    then carry the ``X-Forwarded-Proto`` and ``X-Forwarded-Host`` the proxy would add, and
    the documents must name the public URL.
    """

    # -- the walk ------------------------------------------------------------------------

    def run(self) -> list[Finding]:
        metadata_url = self.check_challenge()
        if metadata_url:
            issuer = self.check_protected_resource(metadata_url)
            if issuer:
                self.check_authorization_server(issuer)
        if self.credential:
            if self.check_legacy_handshake():
                tools = self.list_tools()
                if tools is not None:
                    self.check_tools(tools)
            capabilities = self.check_modern_discover()
            if self.task_tool:
                self.check_task(capabilities)
            if self.subscribe_uri:
                self.check_subscription(capabilities)
        self.check_cors()
        server_card.read_card(self)
        return self.findings

    def check_cors(self) -> None:
        headers = {
            "Origin": BROWSER_ORIGIN,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": ", ".join(BROWSER_HEADERS),
            **self.proxy_headers(),
        }
        answer = self.http.request("OPTIONS", self.url, headers)
        allowed_origin = answer.header("access-control-allow-origin")
        allowed = {
            h.strip().lower() for h in answer.header("access-control-allow-headers").split(",")
        }
        if allowed_origin not in (BROWSER_ORIGIN, "*"):
            self.warning(
                "W040",
                f"A browser client on {BROWSER_ORIGIN} (the MCP Inspector) gets no CORS "
                "permission: browser-based clients fail before their first POST.",
                "Install django-cors-headers and allow the origins of the browser clients "
                "you support (docs/operations.md).",
            )
            return
        missing = [h for h in BROWSER_HEADERS if h not in allowed and "*" not in allowed]
        if missing:
            self.warning(
                "W041",
                f"The CORS preflight does not allow the header(s) {', '.join(missing)}.",
                "Add the MCP headers to CORS_ALLOW_HEADERS, and expose mcp-session-id and "
                "www-authenticate with CORS_EXPOSE_HEADERS.",
            )
            return
        self.ok(f"CORS preflight from {BROWSER_ORIGIN}")


PROXY_HINT = (
    "Behind a proxy, let Django see the public scheme and host (SECURE_PROXY_SSL_HEADER, "
    'USE_X_FORWARDED_HOST), or set MCP_ENDPOINT["RESOURCE_URL"] to the public URL.'
)


ROUTED_ELSEWHERE_HINT = (
    "Is this the URL the endpoint is mounted at? If it is, something routes the path before "
    "ROOT_URLCONF's pattern: a middleware that sets request.urlconf per request "
    "(multi-domain or per-tenant routing), whose URLconf must then include the endpoint's "
    "URLs too, or a catch-all pattern listed before the endpoint's. Check with "
    "`python manage.py mcp_doctor --host <the host clients use>`, which goes through the "
    "middleware; resolve('/mcp') in a shell only reads ROOT_URLCONF."
)


def routed_to(path: str) -> str:
    """Which pattern of ROOT_URLCONF answers ``path``, when it is not an endpoint's: the
    catch-all that comes first, say. Empty when none does, or the settings are not loaded
    (a middleware's URLconf may still route it elsewhere)."""
    try:
        from mcp_endpoint.checks import answering_pattern

        answered = answering_pattern(path or "/")
    except Exception:
        return ""  # no Django project to read: the doctor also checks remote servers
    if answered is None or answered[2] is not None:
        return ""
    route, view, _ = answered
    return f" (in ROOT_URLCONF, the pattern {route!r}, view {view}, answers {path})"


def sse_data(body: bytes) -> Any:
    """The JSON of the first event in ``body`` (an event stream's first event); None."""
    text = body.decode("utf-8", "replace")
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
    try:
        return json.loads("\n".join(data)) if data else None
    except (ValueError, RecursionError):
        return None


def answers_as_mcp(answer: Response) -> bool:
    """Whether ``answer`` comes from an MCP endpoint: a JSON-RPC message or an event stream
    (the endpoint answers every refusal but the 401 with a JSON-RPC error)."""
    if answer.header("content-type").startswith("text/event-stream"):
        return True
    body = answer.json()
    return isinstance(body, dict) and body.get("jsonrpc") == "2.0"


def example_of(schema: Any, depth: int = 0) -> Any:
    """The simplest value ``schema`` describes: required properties only, lower bounds,
    the first of a choice. The schema is the server's: values of the wrong type are passed
    over, and sizes are bounded (:data:`MAX_EXAMPLE_SIZE`)."""
    if not isinstance(schema, dict) or depth > 16:
        return None
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    if "default" in schema:
        return schema["default"]
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list) and schema[key]:
            return example_of(schema[key][0], depth + 1)
    kind = schema.get("type")
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        return {
            prop: example_of(properties.get(prop, {}), depth + 1)
            for prop in required
            if isinstance(prop, str)
        }
    if kind == "array":
        return [example_of(schema.get("items", {}), depth + 1)] * size_of(schema, "minItems")
    if kind == "string":
        sample = FORMAT_SAMPLES.get(str(schema.get("format")), "x")
        return sample.ljust(size_of(schema, "minLength"), "x")
    if kind in ("integer", "number"):
        low = number_of(schema, "minimum")
        if low is None:
            exclusive = number_of(schema, "exclusiveMinimum")
            low = 0 if exclusive is None else exclusive + 1
        return math.ceil(low) if kind == "integer" else low
    if kind == "boolean":
        return False
    return None


def number_of(schema: dict[str, Any], key: str) -> float | None:
    """``schema[key]`` when it is a finite number, else None."""
    value = schema.get(key)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def size_of(schema: dict[str, Any], key: str) -> int:
    """``schema[key]`` as a size from 0 to :data:`MAX_EXAMPLE_SIZE` (0 when not a number)."""
    value = number_of(schema, key)
    return 0 if value is None else max(0, min(int(value), MAX_EXAMPLE_SIZE))


class NoValidation(Exception):
    """The child process validating a schema gave no answer; the message says why."""


def validate_in_child(schema: Any, arguments: Any, seconds: float) -> list[str] | None:
    """What validating ``arguments`` against ``schema`` finds (None for a schema that is not
    valid), in a child process killed after ``seconds``; :class:`NoValidation` when it did
    not answer."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", VALIDATE_IN_CHILD],
            input=json.dumps([schema, arguments]),
            capture_output=True,
            text=True,
            timeout=seconds,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise NoValidation(
            f"validating arguments built from the input schema took more than {seconds:g} s: "
            "a pattern that backtracks without bound (such as ^(a+)+$) stalls every client "
            "that validates with it."
        ) from exc
    try:
        problems = json.loads(done.stdout)
    except ValueError:
        problems = False
    if done.returncode != 0 or not (problems is None or isinstance(problems, list)):
        last = done.stderr.strip().splitlines()[-1:] or [f"exit status {done.returncode}"]
        raise NoValidation(f"the input schema could not be validated against: {last[0]}")
    return problems


def depth_of(value: Any) -> int:
    """How deep arrays and objects nest in ``value``, counted without recursing."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def holds_patterns(schema: Any) -> bool:
    """Whether ``schema`` has a ``pattern`` or ``patternProperties`` anywhere (a property
    named so counts too: it only sends the schema to the child process)."""
    stack = [schema]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "pattern" in item or "patternProperties" in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def deploy_findings() -> list[Finding]:
    """This app's own ``check --deploy`` messages, as findings."""
    from django.core import checks

    found = []
    for message in checks.run_checks(include_deployment_checks=True):
        if not str(message.id or "").startswith("mcp_endpoint."):
            continue
        level = "error" if message.level >= checks.ERROR else "warning"
        if message.level < checks.WARNING:
            continue
        found.append(Finding(str(message.id), level, str(message.msg), str(message.hint or "")))
    return found
