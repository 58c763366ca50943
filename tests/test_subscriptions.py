"""Resource subscriptions fed by the host's data (legacy sessions).

The demo's task board (``tracker://projects/{id}/board``) follows ``Task``: a task saved or
deleted, once committed, publishes "updated" for its project's board. A client in a
session subscribes to boards it may read and hears about them on the session's GET stream,
only while it may still read them. In process for subscribing and publishing; with two
uvicorn processes on Redis, an SDK client and a change made through the REST API for the
stream.
"""

from __future__ import annotations

import http.client
import json
import queue
import secrets
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from asgiref.sync import async_to_sync
from django.core.signals import request_finished
from django.db import close_old_connections, transaction
from django.db import connection as database
from django.test import AsyncClient, RequestFactory
from django.test import Client as DjangoClient
from django.test.utils import CaptureQueriesContext
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_endpoint import site, subscriptions
from mcp_endpoint.authentication import authenticate, drf_request
from mcp_endpoint.models import APIKey
from mcp_endpoint.protocol.server import RequestContext
from mcp_endpoint.sessions import SessionStore
from project.tracker.models import Project, Task
from tests.conftest import MCPClient
from tests.live_server import HOST, UvicornServer, manage, require_redis
from tests.test_e2e_sdk import DEMO_PROJECT, create_key
from tests.test_modern import meta
from tests.test_sessions import LEGACY, in_session, initialize
from tests.test_streaming import parse_events

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_cache")]


@pytest.fixture
def sessions_on(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


def board(project: Project) -> str:
    return f"tracker://projects/{project.pk}/board"


def stored_subscriptions(session_id: str) -> list[str]:
    store = SessionStore(site)
    found: list[str] = store.cache.get(store.key(session_id))["subscriptions"]
    return found


# -- announcing and subscribing ----------------------------------------------------------------


LEGACY_INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": LEGACY, "capabilities": {}},
}
MODERN_DISCOVER_HEADERS = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "server/discover"}


def announced(answer: Any) -> bool:
    return "subscribe" in answer.json()["result"]["capabilities"].get("resources", {})


def wsgi_initialize(key: str, **environ: Any) -> Any:
    """``initialize`` through Django's test client (a WSGI request), the server's
    ``wsgi.*`` flags as ``environ`` says."""
    return DjangoClient().post(
        "/mcp",
        LEGACY_INITIALIZE,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
        **environ,
    )


def test_subscribe_is_announced_with_sessions_only(alice_key: str, settings: Any) -> None:
    async_client = AsyncClient()
    headers = {"Authorization": f"Bearer {alice_key}"}

    def asgi_initialize() -> Any:
        return async_to_sync(async_client.post)(
            "/mcp", LEGACY_INITIALIZE, content_type="application/json", headers=headers
        )

    assert not announced(asgi_initialize())
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    assert announced(asgi_initialize())


def test_subscribe_is_announced_under_wsgi_only_where_a_stream_is_held(
    alice_key: str, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    one_process = {"wsgi.multiprocess": False}
    # A WSGI GET stream is refused unless the host accepts that it holds a worker.
    assert not announced(wsgi_initialize(alice_key, **one_process, **{"wsgi.multithread": True}))
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "WSGI_GET_STREAMS": True}
    # A sync worker of one thread (gunicorn's sync workers) would be held whole.
    assert not announced(wsgi_initialize(alice_key, **one_process, **{"wsgi.multithread": False}))
    assert announced(wsgi_initialize(alice_key, **one_process, **{"wsgi.multithread": True}))


def test_subscribe_is_not_announced_across_processes_without_redis(
    alice_key: str, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True, "WSGI_GET_STREAMS": True}
    threaded = {"wsgi.multithread": True}
    # An update saved in another worker process would never reach this one's stream.
    assert not announced(wsgi_initialize(alice_key, **threaded, **{"wsgi.multiprocess": True}))
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SUBSCRIPTIONS_REDIS_URL": "redis://127.0.0.1:6379/15",
    }
    assert announced(wsgi_initialize(alice_key, **threaded, **{"wsgi.multiprocess": True}))


def test_subscribe_and_unsubscribe_a_readable_board(
    rpc: MCPClient, sessions_on: None, project: Project
) -> None:
    session_id = initialize(rpc)
    headers = in_session(session_id)
    response = rpc.request("resources/subscribe", {"uri": board(project)}, headers=headers)
    assert response.json()["result"] == {}
    assert stored_subscriptions(session_id) == [board(project)]
    response = rpc.request("resources/unsubscribe", {"uri": board(project)}, headers=headers)
    assert response.json()["result"] == {}
    assert stored_subscriptions(session_id) == []


def test_no_subscription_to_what_the_credential_cannot_read(
    rpc: MCPClient, sessions_on: None, carol: Any
) -> None:
    others = Project.objects.create(name="Carol's", owner=carol)
    session_id = initialize(rpc)
    for uri in (board(others), "tracker://nothing-here"):
        response = rpc.request("resources/subscribe", {"uri": uri}, headers=in_session(session_id))
        assert response.status_code == 200
        assert response.json()["error"]["code"] == -32002
        assert response.json()["error"]["data"] == {"uri": uri}
    assert stored_subscriptions(session_id) == []


def test_a_session_holds_at_most_its_subscriptions(
    rpc: MCPClient, settings: Any, project: Project, alice: Any
) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SESSIONS": True,
        "SUBSCRIPTIONS_PER_SESSION": 2,
    }
    second = Project.objects.create(name="Second", owner=alice)
    third = Project.objects.create(name="Third", owner=alice)
    session_id = initialize(rpc)
    headers = in_session(session_id)
    for uri in (board(project), board(second), board(project)):
        assert "result" in rpc.request("resources/subscribe", {"uri": uri}, headers=headers).json()
    response = rpc.request("resources/subscribe", {"uri": board(third)}, headers=headers)
    assert response.json()["error"]["code"] == -32602
    assert response.json()["error"]["data"] == {"limit": 2}
    assert "at most 2 subscriptions" in response.json()["error"]["message"]
    assert stored_subscriptions(session_id) == [board(project), board(second)]
    rpc.request("resources/unsubscribe", {"uri": board(second)}, headers=headers)
    assert (
        "result"
        in rpc.request("resources/subscribe", {"uri": board(third)}, headers=headers).json()
    )


def aliases(project: Project) -> list[str]:
    """Other spellings of the project's board: leading zeros, percent-escaped digits."""
    escaped = "".join(f"%{ord(c):02X}" for c in str(project.pk))
    return [
        f"tracker://projects/0{project.pk}/board",
        f"tracker://projects/{'0' * 3000}{project.pk}/board",
        f"tracker://projects/{escaped}/board",
    ]


def test_aliases_of_a_resource_are_one_subscription(
    rpc: MCPClient, sessions_on: None, project: Project
) -> None:
    session_id = initialize(rpc)
    headers = in_session(session_id)
    for uri in aliases(project):
        assert "result" in rpc.request("resources/subscribe", {"uri": uri}, headers=headers).json()
    assert stored_subscriptions(session_id) == [board(project)]
    unsubscribed = rpc.request(
        "resources/unsubscribe", {"uri": aliases(project)[0]}, headers=headers
    )
    assert unsubscribed.json()["result"] == {}


# Text in the place of the project's id that is no integer a column holds: digits past
# int()'s limit, a superscript digit (str.isdigit() says yes, int() says no), past 64 bits.
NOT_AN_ID = ["5" * 5000, "\u00b9", "\u0663", "9" * 19, "1e3", "0x10", "+1", " 1"]


@pytest.mark.parametrize("project_id", NOT_AN_ID, ids=range(len(NOT_AN_ID)))
def test_a_board_uri_that_names_no_project(
    rpc: MCPClient, sessions_on: None, project: Project, project_id: str
) -> None:
    uri = f"tracker://projects/{project_id}/board"
    session_id = initialize(rpc)
    for method in ("resources/read", "resources/subscribe"):
        response = rpc.request(method, {"uri": uri}, headers=in_session(session_id))
        assert response.status_code == 200, response.content[:300]
        assert response.json()["error"]["code"] == -32002
    assert stored_subscriptions(session_id) == []


@pytest.mark.parametrize("params", [{}, {"uri": ""}, {"uri": 7}])
def test_subscribe_needs_a_uri(rpc: MCPClient, sessions_on: None, params: Any) -> None:
    session_id = initialize(rpc)
    response = rpc.request("resources/subscribe", params, headers=in_session(session_id))
    assert response.json()["error"]["code"] == -32602
    assert stored_subscriptions(session_id) == []


def test_without_sessions_subscribe_is_unknown(rpc: MCPClient, project: Project) -> None:
    response = rpc.request("resources/subscribe", {"uri": board(project)})
    assert response.json()["error"]["code"] == -32601


def test_subscribe_needs_the_session_header(
    rpc: MCPClient, sessions_on: None, project: Project
) -> None:
    initialize(rpc)
    response = rpc.request("resources/subscribe", {"uri": board(project)})
    assert response.status_code == 400


# -- publishing on commit ------------------------------------------------------------------------


@pytest.fixture
def heard() -> Iterator[queue.Queue[str]]:
    hub = subscriptions.hub_for(site)  # locmem cache: this process's broker
    listener = hub.listen_sync()
    yield listener
    hub.leave(listener)


def drain(listener: queue.Queue[str]) -> list[str]:
    found = []
    while not listener.empty():
        found.append(listener.get_nowait())
    return found


def test_a_committed_change_publishes_its_board(
    project: Project, heard: queue.Queue[str], django_capture_on_commit_callbacks: Any
) -> None:
    task = Task.objects.filter(project=project).first()
    assert task is not None
    with django_capture_on_commit_callbacks(execute=True):
        task.title = "Renamed"
        task.save()
    assert drain(heard) == [board(project)]
    with django_capture_on_commit_callbacks(execute=True):
        task.delete()
    assert drain(heard) == [board(project)]


def test_a_rolled_back_change_publishes_nothing(
    project: Project, heard: queue.Queue[str], django_capture_on_commit_callbacks: Any
) -> None:
    task = Task.objects.filter(project=project).first()
    assert task is not None
    with (
        django_capture_on_commit_callbacks(execute=True) as callbacks,
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        task.title = "Never"
        task.save()
        raise RuntimeError("rolled back")
    assert callbacks == [] and drain(heard) == []


def test_an_update_is_sent_only_while_the_credential_may_read(
    rpc: MCPClient, sessions_on: None, project: Project, alice: Any, bob: Any
) -> None:
    session_id = initialize(rpc)
    rpc.request("resources/subscribe", {"uri": board(project)}, headers=in_session(session_id))
    request = RequestFactory().get("/mcp", headers={"Authorization": f"Bearer {rpc.key}"})
    credential = authenticate(drf_request(request, site.settings.AUTHENTICATION_CLASSES))
    context = RequestContext(era="legacy", credential=credential, transport=request)
    access = subscriptions.StreamAccess(site, request, context)
    assert subscriptions.wanted_update(site, session_id, board(project), access) is True
    assert subscriptions.wanted_update(site, session_id, "tracker://guide", access) is False
    # Alice leaves the project (she owned it: it passes to bob); her board goes quiet.
    project.owner = bob
    project.save()
    project.members.remove(alice)
    assert subscriptions.wanted_update(site, session_id, board(project), access) is False
    assert subscriptions.wanted_update(site, "gone", board(project), access) is None


@pytest.mark.parametrize("change", ["revoke", "scope", "deactivate"])
def test_a_stream_ends_at_a_keepalive_once_its_credential_no_longer_holds(
    rpc: MCPClient, sessions_on: None, project: Project, alice: Any, change: str
) -> None:
    session_id = initialize(rpc)
    rpc.request("resources/subscribe", {"uri": board(project)}, headers=in_session(session_id))
    request = RequestFactory().get("/mcp", headers={"Authorization": f"Bearer {rpc.key}"})
    credential = authenticate(drf_request(request, site.settings.AUTHENTICATION_CLASSES))
    context = RequestContext(era="legacy", credential=credential, transport=request)
    access = subscriptions.StreamAccess(site, request, context)
    assert subscriptions.wanted_update(site, session_id, "", access) is False  # a keep-alive
    key = credential.auth
    if change == "revoke":
        key.revoke()
    elif change == "scope":
        key.scope = "write"
        key.save()
    else:
        alice.is_active = False
        alice.save()
    assert subscriptions.wanted_update(site, session_id, "", access) is None
    assert subscriptions.wanted_update(site, session_id, board(project), access) is None


def test_wsgi_get_stays_405_unless_accepted(
    client: Any, sessions_on: None, alice_key: str, rpc: MCPClient
) -> None:
    session_id = initialize(rpc)
    headers = {"Authorization": f"Bearer {alice_key}", **in_session(session_id)}
    response = client.get("/mcp", headers=headers)
    assert response.status_code == 405
    assert response.json()["error"]["code"] == -32000


@pytest.fixture
def wsgi_streams(settings: Any) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SESSIONS": True,
        "WSGI_GET_STREAMS": True,
        "STREAMS_PER_CREDENTIAL": 1,
    }


@pytest.mark.usefixtures("wsgi_streams")
def test_allowed_methods_name_get_where_streams_are_served(client: Any) -> None:
    # A PUT is refused with the methods that work here, GET included once it opens streams.
    response = client.put("/mcp")
    assert response.status_code == 405
    assert response["Allow"] == "GET, POST, OPTIONS, DELETE"
    assert client.options("/mcp")["Allow"] == "GET, POST, OPTIONS, DELETE"


def open_stream(client: Any, key: str, session_id: str) -> Any:
    headers = {"Authorization": f"Bearer {key}", "Accept": "text/event-stream"}
    return client.get("/mcp", headers={**headers, **in_session(session_id)})


def end_stream(response: Any) -> None:
    """Close a stream the test client returned, as the client itself closes one it read to
    the end: the request's end must not close the test's database connection, which a test
    transaction on PostgreSQL would lose (autocommit is off in it, so Django closes it)."""
    request_finished.disconnect(close_old_connections)
    try:
        response.close()
    finally:
        request_finished.connect(close_old_connections)


def test_a_wsgi_stream_when_accepted_carries_subscribed_updates(
    client: Any, rpc: MCPClient, wsgi_streams: None, project: Project, carol: Any
) -> None:
    session_id = initialize(rpc)
    rpc.request("resources/subscribe", {"uri": board(project)}, headers=in_session(session_id))
    response = open_stream(client, rpc.key or "", session_id)
    assert response.status_code == 200 and response["Content-Type"] == "text/event-stream"
    chunks = iter(response.streaming_content)
    assert next(chunks).startswith(b":")  # open: changes from now on are heard
    others = Project.objects.create(name="Carol's", owner=carol)
    subscriptions.publish(site, [board(others), "tracker://guide", board(project)])
    [update] = parse_events(next(chunks))
    assert update == {
        "jsonrpc": "2.0",
        "method": "notifications/resources/updated",
        "params": {"uri": board(project)},
    }
    end_stream(response)


@pytest.mark.django_db(transaction=True)
def test_open_streams_per_credential_are_capped(
    client: Any, rpc: MCPClient, wsgi_streams: None
) -> None:
    session_id = initialize(rpc)
    first = open_stream(client, rpc.key or "", session_id)
    next(iter(first.streaming_content))
    second = open_stream(client, rpc.key or "", session_id)
    assert second.status_code == 429
    assert second.json()["error"]["code"] == -32000
    assert second.json()["error"]["data"] == {"limit": 1}
    end_stream(first)  # the stream ends: its place is free again
    third = open_stream(client, rpc.key or "", session_id)
    assert third.status_code == 200
    end_stream(third)


def test_no_stream_for_subscriptions_the_scopes_no_longer_read(
    client: Any, rpc: MCPClient, wsgi_streams: None, project: Project, alice: Any
) -> None:
    session_id = initialize(rpc)
    rpc.request("resources/subscribe", {"uri": board(project)}, headers=in_session(session_id))
    key = APIKey.objects.get(user=alice)
    key.scope = "write"
    key.save()
    # It would end at its first keep-alive, and the client would open it again and again.
    response = open_stream(client, rpc.key or "", session_id)
    assert response.status_code == 403
    assert "unsubscribe" in response.json()["error"]["message"]


def test_a_stream_needs_a_live_session(client: Any, rpc: MCPClient, wsgi_streams: None) -> None:
    initialize(rpc)
    headers = {"Authorization": f"Bearer {rpc.key}"}
    assert client.get("/mcp", headers=headers).status_code == 400
    assert client.get("/mcp", headers={**headers, **in_session("nope")}).status_code == 404


# -- two uvicorn processes, one Redis, an SDK client and the REST API ----------------------------


@dataclass
class Deployment:
    mcp: UvicornServer
    rest: UvicornServer
    key: str
    project_id: int
    task_id: int


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    redis_url = require_redis()
    workdir: Path = tmp_path_factory.mktemp("subscriptions-two")
    env = {
        "SQLITE_PATH": str(workdir / "shared.sqlite3"),
        "REDIS_URL": redis_url,
        "CACHE_KEY_PREFIX": f"mcp-subs-{secrets.token_hex(6)}",
        "DEMO_MCP_SESSIONS": "1",
        "DATABASE_URL": "",
    }
    with UvicornServer(workdir / "a", workers=1, env=env) as first:
        manage(first.env, "seed_demo")
        key = create_key(first.env, "alice", "read write")
        facts = manage(first.env, "shell", "-c", (
            "from project.tracker.models import Project\n"
            f"p = Project.objects.get(name={DEMO_PROJECT!r})\n"
            "print(p.pk, p.tasks.first().pk)\n"))  # fmt: skip
        project_id, task_id = (int(n) for n in facts.strip().splitlines()[-1].split())
        with UvicornServer(
            workdir / "b", workers=1, env=env, migrate=False, share_database=first
        ) as second:
            yield Deployment(first, second, key, project_id, task_id)


def patch_task(server: UvicornServer, key: str, task_id: int, title: str) -> int:
    request = urllib.request.Request(
        server.url(f"/api/tasks/{task_id}/"),
        data=json.dumps({"title": title}).encode(),
        method="PATCH",
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=20) as response:
        status: int = response.status
        return status


@pytest.mark.e2e
@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
def test_an_sdk_client_hears_of_a_change_made_through_rest(deployment: Deployment) -> None:
    uri = f"tracker://projects/{deployment.project_id}/board"
    heard: list[str] = []

    async def handler(message: Any) -> None:
        if getattr(message, "method", None) == "notifications/resources/updated":
            heard.append(message.params.uri)

    async def main() -> None:
        headers = {"Authorization": f"Bearer {deployment.key}"}
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            transport = streamable_http_client(deployment.mcp.url("/mcp"), http_client=http)
            async with Client(transport, mode="legacy", message_handler=handler) as client:
                await client.subscribe_resource(uri)
                # The client opens its GET stream on its own; a change made before the stream
                # is open is not news to it, so change until one is heard (a bounded loop).
                for attempt in range(20):
                    status = await anyio.to_thread.run_sync(
                        patch_task, deployment.rest, deployment.key, deployment.task_id,
                        f"Renamed {attempt}")  # fmt: skip
                    assert status == 200
                    with anyio.move_on_after(1.5):
                        while not heard:
                            await anyio.sleep(0.05)
                    if heard:
                        break
                board = await client.read_resource(uri)
                text = getattr(board.contents[0], "text", "")
                assert "Renamed" in text

    anyio.run(main)
    assert heard and set(heard) == {uri}, deployment.mcp.log_tail()


# -- 2026-07-28: subscriptions/listen --------------------------------------------------------------


def listen_message(uris: Any, request_id: Any = 5) -> tuple[dict[str, Any], dict[str, str]]:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "subscriptions/listen",
        "params": {"_meta": meta(), "notifications": {"resourceSubscriptions": uris}},
    }
    headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "subscriptions/listen",
        "Accept": "text/event-stream",
    }
    return message, headers


def test_modern_discover_announces_subscribe_under_asgi_only(
    rpc: MCPClient, alice_key: str
) -> None:
    message = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta()}}
    # Under WSGI a listen stream is acknowledged and ends at once: nothing to announce.
    assert not announced(rpc.post(message, headers=MODERN_DISCOVER_HEADERS))
    headers = {"Authorization": f"Bearer {alice_key}", **MODERN_DISCOVER_HEADERS}
    answer = async_to_sync(AsyncClient().post)(
        "/mcp", message, content_type="application/json", headers=headers
    )
    assert answer.json()["result"]["capabilities"]["resources"]["subscribe"] is True


def test_listen_under_wsgi_acknowledges_and_ends(rpc: MCPClient, project: Project) -> None:
    # A WSGI worker is not held for a listen stream: nothing is honoured, and it ends.
    message, headers = listen_message([board(project)])
    response = rpc.post(message, headers=headers)
    assert response["Content-Type"] == "text/event-stream"
    ack, end = parse_events(b"".join(response.streaming_content))
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 5
    assert ack["params"]["notifications"] == {}
    assert end["id"] == 5 and end["result"]["resultType"] == "complete"
    assert end["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 5


@pytest.mark.parametrize("uris", ["tracker://guide", [3], [""], {"a": 1}])
def test_listen_refuses_malformed_filters(rpc: MCPClient, uris: Any) -> None:
    message, headers = listen_message(uris)
    response = rpc.post(message, headers=headers)
    assert response.status_code == 400
    assert response.json()["error"]["code"] == -32602
    assert response.json()["id"] == 5


def test_listen_is_not_a_legacy_method(rpc: MCPClient) -> None:
    response = rpc.request("subscriptions/listen", {"notifications": {}})
    assert response.json()["error"]["code"] == -32601


def test_listen_honours_only_readable_uris(rpc: MCPClient, project: Project, carol: Any) -> None:
    others = Project.objects.create(name="Carol's", owner=carol)
    request = RequestFactory().post("/mcp", headers={"Authorization": f"Bearer {rpc.key}"})
    context = RequestContext(
        era="2026-07-28",
        credential=authenticate(drf_request(request, site.settings.AUTHENTICATION_CLASSES)),
        transport=request,
    )
    requested = {"resourceSubscriptions": [board(project), board(others)], "toolsListChanged": True}
    assert site.features.listen_filter(requested, context) == {
        "resourceSubscriptions": [board(project)]
    }


def tracker_queries(captured: CaptureQueriesContext) -> int:
    return sum("tracker_" in query["sql"] for query in captured.captured_queries)


def test_a_listen_over_the_cap_is_refused_before_anything_is_read(
    rpc: MCPClient, project: Project
) -> None:
    # A thousand copies of one URI: refused at once, not read a thousand times.
    message, headers = listen_message([board(project)] * 1000)
    with CaptureQueriesContext(database) as captured:
        response = rpc.post(message, headers=headers)
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == -32602
    assert error["data"] == {"limit": 32}
    assert "at most 32 resource URIs" in error["message"]
    assert response.json()["id"] == 5
    assert tracker_queries(captured) == 0


def test_a_listen_reads_each_resource_once(rpc: MCPClient, project: Project) -> None:
    request = RequestFactory().post("/mcp", headers={"Authorization": f"Bearer {rpc.key}"})
    context = RequestContext(
        era="2026-07-28",
        credential=authenticate(drf_request(request, site.settings.AUTHENTICATION_CLASSES)),
        transport=request,
    )
    with CaptureQueriesContext(database) as once:
        site.features.listen_filter({"resourceSubscriptions": [board(project)]}, context)
    requested = [board(project), *aliases(project), board(project)]
    with CaptureQueriesContext(database) as aliased:
        honoured = site.features.listen_filter({"resourceSubscriptions": requested}, context)
    assert honoured == {"resourceSubscriptions": [board(project)]}
    assert tracker_queries(aliased) == tracker_queries(once) > 0


@pytest.mark.e2e
def test_a_modern_listen_stream_hears_of_a_rest_change(deployment: Deployment) -> None:
    uri = f"tracker://projects/{deployment.project_id}/board"
    message, headers = listen_message([uri], request_id="listen-1")
    connection = http.client.HTTPConnection(HOST, deployment.mcp.port, timeout=2)
    connection.request("POST", "/mcp", body=json.dumps(message), headers={
        **headers, "Content-Type": "application/json",
        "Authorization": f"Bearer {deployment.key}"})  # fmt: skip
    response = connection.getresponse()
    assert response.status == 200

    def next_message() -> dict[str, Any] | None:
        block = b""
        try:
            while not block.endswith(b"\n\n") or block.strip().startswith(b":"):
                if block.endswith(b"\n\n"):
                    block = b""  # a keep-alive comment
                block += response.readline()
        except TimeoutError:
            return None
        events = parse_events(block)
        return events[0] if events else None

    ack = next_message()
    assert ack is not None and ack["params"]["notifications"] == {"resourceSubscriptions": [uri]}
    heard = None
    for attempt in range(10):  # the relay may still be subscribing: change until heard
        patch_task(deployment.rest, deployment.key, deployment.task_id, f"Listened {attempt}")
        heard = next_message()
        if heard is not None:
            break
    connection.close()
    assert heard is not None, deployment.mcp.log_tail()
    assert heard["method"] == "notifications/resources/updated"
    assert heard["params"]["uri"] == uri
    assert heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "listen-1"


@pytest.mark.parametrize(
    ("backend", "expected"),
    [
        ("django.core.cache.backends.redis.RedisCache", "redis://127.0.0.1:6379/5"),
        ("mcp_endpoint.redis_cache.RedisCache", "redis://127.0.0.1:6379/5"),
        ("django.core.cache.backends.locmem.LocMemCache", None),
    ],
)
def test_updates_travel_through_the_redis_of_any_redis_cache(
    settings: Any, backend: str, expected: str | None
) -> None:
    # The demo's cache is a subclass of Django's Redis cache: its Redis carries the updates
    # too, or two processes would never hear of each other's changes.
    settings.CACHES = {
        **settings.CACHES,
        site.settings.CACHE: {"BACKEND": backend, "LOCATION": "redis://127.0.0.1:6379/5"},
    }
    assert subscriptions.redis_url(site) == expected
