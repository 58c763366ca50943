"""Per-credential caps on what waits or holds a thread: streamed calls, requests to the client.

In process through Django's test client: one credential's calls parked on its client (a
legacy session that declares elicitation and never answers the confirmation of a delete)
take at most their share; the excess gets the documented tool error, and other credentials
stream as before. The same through real servers, gunicorn and uvicorn, in
``test_limits_live.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from mcp_endpoint import streaming
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key
from tests.live_server import HOST, TcpProxy, require_redis
from tests.test_sessions import SSE, in_session, initialize
from tests.test_streaming import parse_events

# Streamed calls run on another thread, which must see the rows the test made.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("private_cache")]

ELICITATION = {"elicitation": {}}
DECLINE = {"action": "decline"}


def caps(settings: Any, **values: Any) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SESSIONS": True,
        "CONFIRM_DESTRUCTIVE_TOOLS": True,
        **values,
    }


class Caller:
    """One credential's legacy session that can be asked to confirm a delete."""

    def __init__(self, rpc: MCPClient) -> None:
        self.rpc = rpc
        self.session = initialize(rpc, ELICITATION)
        self.open: list[Any] = []

    def delete(self, task: Task) -> Any:
        response = self.rpc.request(
            "tools/call",
            {"name": "delete_task", "arguments": {"id": task.pk}},
            headers=in_session(self.session, Accept=SSE),
        )
        assert response.status_code == 200, response.content
        if response["Content-Type"] == "text/event-stream":
            self.open.append(response)
        return response

    def answer(self, question: dict[str, Any], result: dict[str, Any]) -> None:
        reply = {"jsonrpc": "2.0", "id": question["id"], "result": result}
        assert self.rpc.post(reply, headers=in_session(self.session)).status_code == 202

    def close(self) -> None:
        # A client that leaves cancels its parked calls (they stop waiting at once).
        for response in self.open:
            response.close()


@pytest.fixture
def callers(
    mcp_client: Callable[..., MCPClient], alice_key: str, bob: Any, carol: Any
) -> Iterator[Callable[[str], Caller]]:
    made: list[Caller] = []
    keys = {
        "alice": alice_key,
        "bob": make_key(bob, "read write", name="bob"),
        "carol": make_key(carol, "read write", name="carol"),
    }

    def make(name: str) -> Caller:
        caller = Caller(mcp_client(keys[name]))
        made.append(caller)
        return caller

    yield make
    for caller in made:
        caller.close()


def tasks(project: Project, count: int) -> list[Task]:
    return [Task.objects.create(project=project, title=f"Delete me {i}") for i in range(count)]


def question_of(response: Any) -> dict[str, Any]:
    """The first message of a streamed answer: here, the confirmation asked of the client."""
    for chunk in response.streaming_content:
        events = parse_events(chunk)
        if events:
            assert events[0]["method"] == "elicitation/create", events
            return events[0]  # type: ignore[no-any-return]
    raise AssertionError("the stream ended without a message")


def rest_of(response: Any) -> list[dict[str, Any]]:
    return parse_events(b"".join(response.streaming_content))


def tool_error(response: Any) -> dict[str, Any]:
    """A call answered at once, as plain JSON, with a tool error: its structured error."""
    assert response["Content-Type"] == "application/json", response
    result = response.json()["result"]
    assert result["isError"] is True, result
    return result["structuredContent"]["error"]  # type: ignore[no-any-return]


def test_waiting_on_the_client_is_capped_per_credential(
    settings: Any, callers: Callable[[str], Caller], project: Project
) -> None:
    caps(settings, PENDING_CLIENT_REQUESTS_PER_CREDENTIAL=2)
    alice, bob = callers("alice"), callers("bob")
    first, second, third = tasks(project, 3)
    parked = [alice.delete(first), alice.delete(second)]
    questions = [question_of(response) for response in parked]
    # A third call would wait too: refused before the client is asked anything.
    error = tool_error(alice.delete(third))
    assert error["code"] == "too_many_waiting"
    assert "2 calls of this credential are waiting" in error["message"]
    assert Task.objects.filter(pk=third.pk).exists()
    # Another credential is not held back by hers.
    assert question_of(bob.delete(third))["method"] == "elicitation/create"
    # An answered question frees its place.
    alice.answer(questions[0], DECLINE)
    assert rest_of(parked[0])[-1]["result"]["structuredContent"]["error"]["code"] == "not_confirmed"
    assert question_of(alice.delete(first))["method"] == "elicitation/create"


def test_streamed_calls_are_capped_per_credential(
    settings: Any, callers: Callable[[str], Caller], project: Project
) -> None:
    caps(settings, STREAMED_CALLS_PER_CREDENTIAL=1)
    alice, bob = callers("alice"), callers("bob")
    first, second = tasks(project, 2)
    parked = alice.delete(first)
    question = question_of(parked)
    # Beyond her share a call runs unstreamed; it cannot ask her client, and says why.
    error = tool_error(alice.delete(second))
    assert error["code"] == "stream_capacity"
    assert "this credential runs 1 streamed calls already" in error["message"]
    assert Task.objects.filter(pk=second.pk).exists()
    # A call that needs no client answers in full, as plain JSON.
    listed = alice.rpc.request(
        "tools/call",
        {"name": "list_projects", "arguments": {}},
        headers=in_session(alice.session, Accept=SSE),
    )
    assert listed["Content-Type"] == "application/json"
    assert listed.json()["result"]["isError"] is False
    # Bob streams as ever.
    assert question_of(bob.delete(second))["method"] == "elicitation/create"
    alice.answer(question, DECLINE)
    rest_of(parked)
    assert question_of(alice.delete(first))["method"] == "elicitation/create"


@pytest.fixture
def small_pool(settings: Any) -> Iterator[None]:
    # The pool is the process's, started with the first streamed call at the size then set.
    streaming.stream_pool.shutdown()
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "STREAM_POOL_SIZE": 2}
    yield
    streaming.stream_pool.shutdown()


@pytest.mark.usefixtures("small_pool")
def test_a_busy_pool_answers_unstreamed_rather_than_queueing(
    settings: Any, callers: Callable[[str], Caller], project: Project
) -> None:
    caps(settings, STREAMED_CALLS_PER_CREDENTIAL=1, STREAM_POOL_SIZE=2)
    alice, bob = callers("alice"), callers("bob")
    first, second = tasks(project, 2)
    parked = [alice.delete(first), bob.delete(second)]
    questions = [question_of(response) for response in parked]
    # Both threads wait on clients: a third credential's call is not queued behind them.
    carol = callers("carol")
    error = tool_error(carol.delete(first))
    assert error["code"] == "stream_capacity"
    assert "every thread that runs streamed calls on this server is busy" in error["message"]
    for caller, question, response in zip((alice, bob), questions, parked, strict=True):
        caller.answer(question, DECLINE)
        rest_of(response)


def test_a_single_threaded_worker_waits_less(
    settings: Any, callers: Callable[[str], Caller], project: Project
) -> None:
    # Django's test client, like gunicorn's sync workers, says wsgi.multithread is false.
    caps(settings, CLIENT_REQUEST_TIMEOUT=300, SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT=1)
    alice = callers("alice")
    [task] = tasks(project, 1)
    parked = alice.delete(task)
    question_of(parked)
    events: list[dict[str, Any]] = []
    reader = threading.Thread(target=lambda: events.extend(rest_of(parked)), daemon=True)
    reader.start()
    reader.join(timeout=20)
    assert not reader.is_alive(), "the call still waits for the client"
    error = events[-1]["result"]["structuredContent"]["error"]
    assert error["code"] == "client_timeout"
    assert "within 1 s" in error["message"]
    assert Task.objects.filter(pk=task.pk).exists()


def test_the_pool_starts_with_the_first_streamed_call() -> None:
    code = (
        "import django, threading; django.setup()\n"
        "from mcp_endpoint import streaming\n"
        "assert streaming.stream_pool.executor is None\n"
        "assert not [t for t in threading.enumerate() if t.name.startswith('mcp-stream')]\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_a_streamed_call_ends_its_stream_though_the_cache_is_cut_meanwhile(
    settings: Any, callers: Callable[[str], Caller], project: Project
) -> None:
    # The credential's count of streamed calls is kept in the cache; a Redis that goes away
    # while a call waits on its client must not leave its stream open without an answer
    # (keep-alives for ever), as it did when giving the count back raised.
    url = urlsplit(require_redis())
    with TcpProxy((url.hostname or HOST, url.port or 6379)) as proxy:
        settings.CACHES = {
            **settings.CACHES,
            "counts": {
                "BACKEND": "django.core.cache.backends.redis.RedisCache",
                "LOCATION": proxy.url(url.geturl()),
                "KEY_PREFIX": f"limits-cut-{os.getpid()}",
            },
        }
        caps(settings, CLIENT_REQUEST_TIMEOUT=2, STREAM_KEEPALIVE_SECONDS=1, CACHE="counts")
        caller = callers("alice")
        (task,) = tasks(project, 1)
        response = caller.delete(task)
        question_of(response)
        proxy.cut()
        events: list[dict[str, Any]] = []
        reader = threading.Thread(target=lambda: events.extend(rest_of(response)), daemon=True)
        reader.start()
        reader.join(timeout=20)
        assert not reader.is_alive(), "the stream stayed open without its answer"
        assert events and events[-1]["id"] is not None, events
