"""mcp_endpoint.asgi: a request to an endpoint in one thread hand-off, others as Django serves them.

Through the real handlers (this project's and Django's ``ASGIHandler``) with a hand-made
ASGI scope, ``receive`` and ``send``, on an event loop of the test's own. The hand-offs are
counted as ``benchmarks/asgi_handoffs.py`` counts them: calls of asgiref's
``SyncToAsync.__call__`` and ``AsyncToSync.__call__``.
"""

from __future__ import annotations

import asyncio
import inspect
import io
import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from asgiref.sync import AsyncToSync, SyncToAsync, markcoroutinefunction
from django.conf import settings
from django.core import signals
from django.core.handlers.asgi import ASGIHandler
from django.db import connections
from django.http import FileResponse, HttpRequest, HttpResponse
from django.test import override_settings
from django.urls import include, path

from mcp_endpoint import asgi
from mcp_endpoint.asgi import EndpointASGIHandler, close_as, get_asgi_application
from mcp_endpoint.views import MCPView
from project.urls import urlpatterns as host_urlpatterns
from tests.test_modern import FIXTURE
from tests.test_streaming import check_progress_then_result, modern_call, parse_events

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("private_cache")]

LIST_TASKS = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "list_tasks", "arguments": {"page": 1}},
}
PING = {"jsonrpc": "2.0", "id": 7, "method": "ping"}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes
    messages: int = 0


@dataclass
class HandOffs:
    sync_to_async: int = 0
    async_to_sync: int = 0


def scope(method: str, url: str, headers: dict[str, str], body: bytes) -> dict[str, Any]:
    path_info, _, query = url.partition("?")
    raw = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
    raw += [(b"host", b"testserver"), (b"content-length", str(len(body)).encode())]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path_info,
        "raw_path": path_info.encode(),
        "query_string": query.encode(),
        "root_path": "",
        "headers": raw,
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
    }


async def serve(
    app: Any,
    method: str,
    url: str,
    *,
    body: bytes = b"",
    headers: dict[str, str] | None = None,
    leave_after: int | None = None,
    raw_query: bytes | None = None,
    leave_in: float | None = None,
) -> Answer:
    """One request through ``app``; the client leaves once the answer is complete, or after
    ``leave_after`` body messages, or ``leave_in`` seconds."""
    gone = asyncio.Event()
    sent: list[dict[str, Any]] = []
    asked: list[bool] = []

    async def receive() -> dict[str, Any]:
        if not asked:
            asked.append(True)
            return {"type": "http.request", "body": body, "more_body": False}
        await gone.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)
        bodies = [m for m in sent if m["type"] == "http.response.body"]
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            gone.set()
        if leave_after is not None and len(bodies) >= leave_after:
            gone.set()

    if leave_in is not None:
        asyncio.get_running_loop().call_later(leave_in, gone.set)
    request = scope(method, url, headers or {}, body)
    if raw_query is not None:
        request["query_string"] = raw_query
    await asyncio.wait_for(app(request, receive, send), 30)
    start = sent[0]
    return Answer(
        status=start["status"],
        headers={k.decode().lower(): v.decode() for k, v in start["headers"]},
        body=b"".join(m.get("body", b"") for m in sent[1:]),
        messages=len(sent),
    )


def post(app: Any, url: str, message: dict[str, Any], **headers: str) -> Answer:
    headers = {"Content-Type": "application/json", "Accept": "application/json", **headers}
    return asyncio.run(serve(app, "POST", url, body=json.dumps(message).encode(), headers=headers))


@pytest.fixture
def hand_offs(monkeypatch: pytest.MonkeyPatch) -> HandOffs:
    counted = HandOffs()
    sync_to_async, async_to_sync = SyncToAsync.__call__, AsyncToSync.__call__

    async def counting_sync_to_async(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted.sync_to_async += 1
        return await sync_to_async(self, *args, **kwargs)

    def counting_async_to_sync(self: Any, *args: Any, **kwargs: Any) -> Any:
        counted.async_to_sync += 1
        return async_to_sync(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counting_sync_to_async)
    monkeypatch.setattr(AsyncToSync, "__call__", counting_async_to_sync)
    return counted


@pytest.fixture
def handler() -> Iterator[EndpointASGIHandler]:
    app = EndpointASGIHandler()
    yield app
    app.executor.shutdown(wait=True)


def bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


# -- the same answers as Django's handler ----------------------------------------------------


def test_a_keyed_tool_call_answers_as_through_djangos_handler(
    handler: EndpointASGIHandler, alice_key: str, project: Any
) -> None:
    ours = post(handler, "/mcp", LIST_TASKS, **bearer(alice_key))
    django = post(ASGIHandler(), "/mcp", LIST_TASKS, **bearer(alice_key))
    assert ours.status == django.status == 200
    assert ours.body == django.body
    assert json.loads(ours.body)["result"]["structuredContent"]["count"] == 3
    assert ours.headers == django.headers


def test_a_path_that_is_no_endpoint_is_served_by_djangos_handler_unchanged(
    handler: EndpointASGIHandler, hand_offs: HandOffs
) -> None:
    ours = asyncio.run(serve(handler, "GET", "/health"))
    ours_made = (hand_offs.sync_to_async, hand_offs.async_to_sync)
    django = asyncio.run(serve(ASGIHandler(), "GET", "/health"))
    django_made = (hand_offs.sync_to_async - ours_made[0], hand_offs.async_to_sync - ours_made[1])
    assert (ours.status, ours.headers, ours.body) == (django.status, django.headers, django.body)
    # The same way through: as many hand-offs as Django's handler makes.
    assert ours_made == django_made


# -- one hand-off ----------------------------------------------------------------------------


@pytest.mark.parametrize("message", [LIST_TASKS, PING], ids=["tools/call", "ping"])
def test_a_request_to_an_endpoint_makes_one_hand_off(
    handler: EndpointASGIHandler,
    hand_offs: HandOffs,
    alice_key: str,
    project: Any,
    message: dict[str, Any],
) -> None:
    assert post(handler, "/mcp", message, **bearer(alice_key)).status == 200
    assert (hand_offs.sync_to_async, hand_offs.async_to_sync) == (1, 0)
    # What it saves: Django's handler makes several for the same request.
    post(ASGIHandler(), "/mcp", message, **bearer(alice_key))
    assert hand_offs.sync_to_async + hand_offs.async_to_sync > 3


# -- signals and middleware, in the request's thread -----------------------------------------


SEEN: list[tuple[str, str, bool]] = []


class StampMiddleware:
    """Sets a header, and notes the thread the chain ran in."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        SEEN.append(("middleware", threading.current_thread().name, False))
        response: HttpResponse = self.get_response(request)
        response["X-Stamp"] = "stamped"
        return response


def note_started(sender: Any, **kwargs: Any) -> None:
    SEEN.append(("request_started", threading.current_thread().name, "scope" in kwargs))


def note_finished(sender: Any, **kwargs: Any) -> None:
    # Connected after Django's close_old_connections: what it left of this thread's connection.
    connection = connections["default"]
    closed = connection.connection is None or connection.is_in_memory_db()  # type: ignore[attr-defined]
    SEEN.append(("request_finished", threading.current_thread().name, closed))


@pytest.fixture
def noted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[tuple[str, str, bool]]]:
    SEEN.clear()
    signals.request_started.connect(note_started)
    signals.request_finished.connect(note_finished)
    # Connections not kept past their request, as the demo serves under ASGI.
    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)
    yield SEEN
    signals.request_started.disconnect(note_started)
    signals.request_finished.disconnect(note_finished)


def test_signals_and_middleware_run_in_the_requests_one_thread(
    noted: list[tuple[str, str, bool]], alice_key: str, project: Any
) -> None:
    with override_settings(MIDDLEWARE=[*settings.MIDDLEWARE, f"{__name__}.StampMiddleware"]):
        handler = EndpointASGIHandler()
        answer = post(handler, "/mcp", LIST_TASKS, **bearer(alice_key))
        handler.executor.shutdown(wait=True)
    assert answer.status == 200
    assert answer.headers["x-stamp"] == "stamped"
    # Django's own middleware ran too.
    assert answer.headers["x-content-type-options"] == "nosniff"
    # (The tool call runs the viewset through the middleware too: the chain runs twice.)
    events = [event for event, _, _ in noted]
    assert events == ["request_started", "middleware", "middleware", "request_finished"]
    assert len({thread for _, thread, _ in noted}) == 1
    assert noted[0][1].startswith("mcp-endpoint")
    started, finished = noted[0], noted[-1]
    assert started[2], "request_started carries the scope, as Django's handler sends it"
    assert finished[2], "request_finished closed the request's connection"


class AsyncOnlyMiddleware:
    """A middleware written for ASGI only."""

    sync_capable = False
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response
        markcoroutinefunction(self)

    async def __call__(self, request: HttpRequest) -> HttpResponse:
        response: HttpResponse = await self.get_response(request)
        response["X-Async-Stamp"] = "stamped"
        return response


def test_an_async_only_middleware_runs_adapted_as_under_wsgi(
    hand_offs: HandOffs, alice_key: str
) -> None:
    with override_settings(MIDDLEWARE=[f"{__name__}.AsyncOnlyMiddleware", *settings.MIDDLEWARE]):
        handler = EndpointASGIHandler()
        answer = post(handler, "/mcp", PING, **bearer(alice_key))
        handler.executor.shutdown(wait=True)
    assert answer.status == 200
    assert answer.headers["x-async-stamp"] == "stamped"
    # The one hop, then the middleware's own way to the event loop and, for the rest of
    # the chain, back to the request's thread: what a WSGI handler pays for it too.
    assert (hand_offs.sync_to_async, hand_offs.async_to_sync) == (2, 1)


# -- streams, errors -------------------------------------------------------------------------


def test_a_tool_call_streams_its_progress(
    handler: EndpointASGIHandler, noted: list[tuple[str, str, bool]]
) -> None:
    message, headers = modern_call("test_tool_with_progress", token="p-9")
    answer = post(handler, FIXTURE, message, **headers)
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/event-stream"
    assert answer.messages > 3, "sent as it came, not as one body"
    check_progress_then_result(parse_events(answer.body), "p-9", 1)
    # The stream is closed once sent: request_finished, once.
    assert [event for event, _, _ in noted].count("request_finished") == 1


def test_a_client_that_leaves_a_stream_ends_it(
    handler: EndpointASGIHandler, noted: list[tuple[str, str, bool]]
) -> None:
    message, headers = modern_call("test_tool_with_progress", token="p-10")
    body = json.dumps(message).encode()
    headers = {"Content-Type": "application/json", **headers}
    answer = asyncio.run(serve(handler, "POST", FIXTURE, body=body, headers=headers, leave_after=1))
    assert answer.headers["content-type"] == "text/event-stream"
    # The handler returned once the client left, and closed the response.
    assert [event for event, _, _ in noted].count("request_finished") == 1


def test_a_sessions_get_stream_stays_open_until_the_client_leaves(
    handler: EndpointASGIHandler,
    noted: list[tuple[str, str, bool]],
    alice_key: str,
    settings: Any,
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "tests", "version": "1"},
        },
    }
    opened = post(handler, "/mcp", initialize, **bearer(alice_key))
    assert opened.status == 200
    session = {
        **bearer(alice_key),
        "Mcp-Session-Id": opened.headers["mcp-session-id"],
        "MCP-Protocol-Version": "2025-11-25",
        "Accept": "text/event-stream",
    }
    noted.clear()
    answer = asyncio.run(serve(handler, "GET", "/mcp", headers=session, leave_in=0.5))
    assert answer.status == 200
    assert answer.headers["content-type"] == "text/event-stream"
    # The stream ended when the client left, and was closed then: request_finished, once.
    assert [event for event, _, _ in noted] == ["request_started", "request_finished"]


class ExplodingView(MCPView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        raise RuntimeError("boom")


class FileView(MCPView):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> FileResponse:
        return FileResponse(io.BytesIO(b"y" * 200_000), content_type="text/plain")


urlpatterns = [
    path("exploding", ExplodingView.as_view(endpoint=None)),
    path("file", FileView.as_view(endpoint=None)),
    path("", include(host_urlpatterns)),
]


@override_settings(ROOT_URLCONF=__name__)
def test_an_exception_in_the_view_is_a_500_as_djangos(
    handler: EndpointASGIHandler, hand_offs: HandOffs
) -> None:
    ours = post(handler, "/exploding", PING)
    assert (hand_offs.sync_to_async, hand_offs.async_to_sync) == (1, 0)
    django = post(ASGIHandler(), "/exploding", PING)
    assert ours.status == django.status == 500
    assert (ours.headers, ours.body) == (django.headers, django.body)


# Django's own warning for a synchronous iterator served under ASGI, as its handler serves it.
@pytest.mark.filterwarnings("ignore:StreamingHttpResponse must consume synchronous iterators")
@override_settings(ROOT_URLCONF=__name__)
def test_a_file_answer_streams_in_the_handlers_chunks(
    handler: EndpointASGIHandler, noted: list[tuple[str, str, bool]]
) -> None:
    answer = asyncio.run(serve(handler, "GET", "/file"))
    assert answer.status == 200
    assert answer.body == b"y" * 200_000
    # 200,000 bytes in blocks of the handler's chunk size (64 KiB), and the closing message.
    assert answer.messages == 1 + 4 + 1
    assert [event for event, _, _ in noted] == ["request_started", "request_finished"]


def test_a_request_django_refuses_to_build_is_answered_as_by_djangos_handler(
    handler: EndpointASGIHandler, noted: list[tuple[str, str, bool]]
) -> None:
    ours = asyncio.run(serve(handler, "GET", "/mcp", raw_query=b"q=\xff"))
    assert [event for event, _, _ in noted] == ["request_started", "request_finished"]
    django = asyncio.run(serve(ASGIHandler(), "GET", "/mcp", raw_query=b"q=\xff"))
    assert ours.status == django.status == 400
    assert (ours.headers, ours.body) == (django.headers, django.body)


def test_a_client_that_leaves_before_its_body_is_read_gets_nothing(
    handler: EndpointASGIHandler, noted: list[tuple[str, str, bool]]
) -> None:
    sent: list[Any] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.disconnect"}

    async def send(message: Any) -> None:
        sent.append(message)

    asyncio.run(handler(scope("POST", "/mcp", {}, b"{}"), receive, send))
    assert sent == []
    assert noted == []


# -- which paths ------------------------------------------------------------------------------


def test_the_endpoints_paths_are_found_by_resolving_them() -> None:
    assert asgi.serves_endpoint("/mcp")
    assert asgi.serves_endpoint("/mcp/")
    assert asgi.serves_endpoint(FIXTURE)
    assert not asgi.serves_endpoint("/health")
    assert not asgi.serves_endpoint("/no-such-page")
    handler = EndpointASGIHandler()
    assert handler.endpoint_path({"path": "/prefix/mcp", "root_path": "/prefix"})
    handler.executor.shutdown()


def test_a_changed_root_urlconf_is_resolved_afresh() -> None:
    assert not asgi.serves_endpoint("/exploding")
    with override_settings(ROOT_URLCONF=__name__):
        assert asgi.serves_endpoint("/exploding")
    assert not asgi.serves_endpoint("/exploding")


def test_get_asgi_application_gives_the_handler() -> None:
    app = get_asgi_application(max_threads=2)
    assert isinstance(app, EndpointASGIHandler)
    assert app.executor._max_workers == 2
    app.executor.shutdown()


# -- what the handler takes from Django (fails if an upgrade of Django changes it) -----------


def test_django_sends_request_finished_from_the_handler_class_on_the_response() -> None:
    senders: list[Any] = []

    def note(sender: Any, **kwargs: Any) -> None:
        senders.append(sender)

    signals.request_finished.connect(note)
    try:
        response = HttpResponse()
        close_as(response, EndpointASGIHandler)
        response.close()
    finally:
        signals.request_finished.disconnect(note)
    assert senders == [EndpointASGIHandler]


def test_djangos_asgi_handler_has_the_pieces_the_handler_uses() -> None:
    def parameters(function: Any) -> list[str]:
        return list(inspect.signature(function).parameters)

    assert parameters(ASGIHandler.handle) == ["self", "scope", "receive", "send"]
    assert parameters(ASGIHandler.read_body) == ["self", "receive"]
    assert parameters(ASGIHandler.create_request) == ["self", "scope", "body_file"]
    assert isinstance(ASGIHandler.chunk_size, int)


@override_settings(FORCE_SCRIPT_NAME="/forced")
def test_the_script_prefix_is_found_as_djangos_handler_finds_it() -> None:
    assert asgi.script_prefix({"root_path": "/mounted"}) == "/forced"
    with override_settings(FORCE_SCRIPT_NAME=None):
        assert asgi.script_prefix({"root_path": "/mounted"}) == "/mounted"
        assert asgi.script_prefix({}) == ""


def test_an_answer_is_sent_in_chunks_of_the_handlers_size() -> None:
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    for size, messages in ((0, 1), (4, 1), (8, 2), (9, 3)):
        sent.clear()
        response = HttpResponse(b"x" * size)
        response.set_cookie("flavour", "oat")
        asyncio.run(asgi.send_answer(response, send, chunk_size=4))
        cookies = [value for name, value in sent[0]["headers"] if name == b"Set-Cookie"]
        assert [value.split(b";")[0] for value in cookies] == [b"flavour=oat"]
        bodies = sent[1:]
        assert len(bodies) == messages
        assert b"".join(m["body"] for m in bodies) == b"x" * size
        assert [m["more_body"] for m in bodies] == [True] * (messages - 1) + [False]
