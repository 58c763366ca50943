"""``logging/setLevel`` on the product's ``/mcp``, and the host's log records sent to clients.

A legacy session remembers the level its client chose; a streamed tool call then carries
``notifications/message`` for the records the host's loggers (``CLIENT_LOGGERS``) emit while
the call runs, at or above that level, and for no other call.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date, timedelta
from typing import Any

import pytest

from mcp_endpoint.context import Context
from mcp_endpoint.toolsets import CallTool
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key
from tests.hosts import host_endpoint
from tests.test_modern import meta
from tests.test_mrtr import ACCEPT, Rounds
from tests.test_sessions import LEGACY, SSE, in_session, initialize
from tests.test_streaming import LOG_LEVEL, parse_events

# Streamed calls run on another thread, which must see the rows the test made.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("private_cache")]


@pytest.fixture
def sessions_on(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key)


@pytest.fixture
def late_project(project: Project) -> Project:
    Task.objects.create(project=project, title="Late", due=date.today() - timedelta(days=3))
    return project


def summarize(rpc: MCPClient, session_id: str, project: Project) -> list[dict[str, Any]]:
    response = rpc.request(
        "tools/call",
        {"name": "summarize_project", "arguments": {"project_id": project.pk}},
        headers=in_session(session_id, Accept=SSE),
    )
    assert response.status_code == 200
    if response["Content-Type"] == "application/json":
        # A call that sent nothing before its result is answered as plain JSON.
        assert response.json()["result"]["isError"] is False
        return []
    assert response["Content-Type"] == "text/event-stream"
    events = parse_events(b"".join(response.streaming_content))
    assert events[-1]["result"]["isError"] is False
    return [e["params"] for e in events[:-1] if e.get("method") == "notifications/message"]


def test_product_endpoint_announces_logging(rpc: MCPClient) -> None:
    result = rpc.result("initialize", {"protocolVersion": LEGACY, "capabilities": {}})
    assert result["capabilities"]["logging"] == {}


def test_set_level_without_sessions_answers_empty(rpc: MCPClient) -> None:
    assert rpc.result("logging/setLevel", {"level": "error"}) == {}


@pytest.mark.parametrize("level", ["loud", None, 3])
def test_set_level_refuses_unknown_levels(rpc: MCPClient, sessions_on: None, level: Any) -> None:
    session_id = initialize(rpc)
    params = {} if level is None else {"level": level}
    response = rpc.request("logging/setLevel", params, headers=in_session(session_id))
    assert response.status_code == 200
    assert response.json()["error"]["code"] == -32602
    # Nothing was stored: the session's level is still the default (info).
    from mcp_endpoint import site
    from mcp_endpoint.sessions import SessionStore

    store = SessionStore(site)
    stored = store.cache.get(store.key(session_id))
    assert stored["log_level"] is None


def test_records_reach_the_client_at_the_session_level(
    rpc: MCPClient, sessions_on: None, late_project: Project
) -> None:
    session_id = initialize(rpc)
    # The default legacy level is info: both records arrive, named by their logger.
    messages = summarize(rpc, session_id, late_project)
    assert [(m["level"], m["logger"]) for m in messages] == [
        ("warning", "project.tracker.mcp"),
        ("info", "project.tracker.mcp"),
    ]
    assert messages[0]["data"] == f"project {late_project.pk} has 1 overdue task(s)"

    response = rpc.request("logging/setLevel", {"level": "warning"}, headers=in_session(session_id))
    assert response.json()["result"] == {}
    assert [m["level"] for m in summarize(rpc, session_id, late_project)] == ["warning"]

    # Another session of the same credential keeps its own level.
    other = initialize(rpc)
    assert [m["level"] for m in summarize(rpc, other, late_project)] == ["warning", "info"]


def test_records_outside_a_call_go_nowhere(
    rpc: MCPClient, sessions_on: None, project: Project
) -> None:
    session_id = initialize(rpc)
    # Emitted by this thread, outside any call: no channel is current, nothing is sent.
    logging.getLogger("project.tracker.mcp").warning("not part of any call")
    before = sending_state(session_id)
    assert [m["data"] for m in summarize(rpc, session_id, project)] == [
        f"summarised project {project.pk} for alice"
    ], before


def sending_state(session_id: str) -> dict[str, Any]:
    """What decides whether a call's records reach its client, for a failure to show: this
    test failed now and then after other tests in the same process, and passes alone."""
    from mcp_endpoint import client_logging, site, streaming
    from mcp_endpoint.sessions import SessionStore

    store = SessionStore(site)
    pool = streaming.stream_pool
    tracker = logging.getLogger("project.tracker")
    return {
        "pool threads idle": getattr(pool.idle, "_value", None),
        "handler on project.tracker": client_logging._handler in tracker.handlers,
        "installed": sorted(client_logging._installed),
        "effective level": logging.getLogger("project.tracker.mcp").getEffectiveLevel(),
        "channel of this thread": repr(client_logging.current_channel.get()),
        "session": store.cache.get(store.key(session_id)),
        "settings": {
            name: getattr(site.settings, name)
            for name in ("STREAMING", "LOGGING", "CLIENT_LOGGERS", "STREAMED_CALLS_PER_CREDENTIAL")
        },
    }


def test_loggers_not_named_are_not_sent(
    rpc: MCPClient, sessions_on: None, settings: Any, late_project: Project
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CLIENT_LOGGERS": ["mcp_endpoint"]}
    session_id = initialize(rpc)
    # The handler may already sit on project.tracker from an earlier test in this process;
    # the records still must not reach the client when the setting does not name it.
    assert summarize(rpc, session_id, late_project) == []


# -- what stays in the server's log ------------------------------------------------------------


def debug_call(rounds: Rounds, task: Task, **params: Any) -> list[dict[str, Any]]:
    """A 2026-07-28 delete at log level debug, streamed if it says anything: its messages."""
    caps = {"elicitation": {}}
    response = rounds.post(
        "tools/call",
        {
            "name": "delete_task",
            "arguments": {"id": task.pk},
            "_meta": {**meta(caps), LOG_LEVEL: "debug"},
            **params,
        },
        headers={"Accept": SSE},
        capabilities=caps,
    )
    if response["Content-Type"] == "text/event-stream":
        return parse_events(b"".join(response.streaming_content))
    return [response.json()]


@pytest.mark.parametrize(
    ("how", "reason"),
    [("replayed", "minted for another credential"), ("forged", "signature")],
)
def test_refused_request_states_tell_the_client_no_reason(
    mcp_client: Callable[..., MCPClient],
    alice_key: str,
    bob: Any,
    project: Project,
    settings: Any,
    caplog: pytest.LogCaptureFixture,
    how: str,
    reason: str,
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CONFIRM_DESTRUCTIVE_TOOLS": True}
    task = Task.objects.get(project=project, title="Write copy")
    alice = Rounds(mcp_client(alice_key))
    first = alice.call("delete_task", {"id": task.pk}, capabilities={"elicitation": {}})
    state = first.json()["result"]["requestState"]
    caller = alice
    if how == "replayed":
        caller = Rounds(mcp_client(make_key(bob, "read write", name="bob")))
    else:
        state = state[:-4] + ("AAAA" if not state.endswith("AAAA") else "BBBB")
    caplog.set_level(logging.DEBUG, logger="mcp_endpoint")
    messages = debug_call(caller, task, inputResponses=ACCEPT, requestState=state)
    # The client learns that the state is invalid, and nothing of why.
    assert messages[-1]["error"]["data"] == {"reason": "invalid_request_state"}
    sent = [m for m in messages if m.get("method") == "notifications/message"]
    assert not [m for m in sent if reason in str(m) or "requestState" in str(m)], sent
    # The operator does.
    assert f"requestState refused on tools/call: {reason}" in caplog.text
    assert Task.objects.filter(pk=task.pk).exists()


# -- where a call that can only log runs ---------------------------------------------------------


class Threads(logging.Handler):
    """The names of the threads that emitted the records it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.names.append(record.threadName)


def test_a_call_that_can_only_log_runs_in_the_request_thread(
    rpc: MCPClient, sessions_on: None, late_project: Project
) -> None:
    import threading

    from mcp_endpoint import streaming

    session_id = initialize(rpc)
    streaming.stream_pool.shutdown()
    threads = Threads()
    tracker = logging.getLogger("project.tracker.mcp")
    tracker.addHandler(threads)
    try:
        messages = summarize(rpc, session_id, late_project)
    finally:
        tracker.removeHandler(threads)
    # Its records still reach the client, ahead of the answer and in the order emitted...
    assert [m["level"] for m in messages] == ["warning", "info"]
    # ...from the thread that served the request, with no thread of the stream pool started.
    assert threads.names == [threading.current_thread().name] * 2
    assert streaming.stream_pool.executor is None


def test_a_call_that_logs_nothing_is_answered_as_plain_json(
    rpc: MCPClient, sessions_on: None, project: Project, settings: Any
) -> None:
    # Nothing of the tracker's loggers is sent: the call has nothing to say but its answer.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CLIENT_LOGGERS": ["mcp_endpoint"]}
    session_id = initialize(rpc)
    response = rpc.request(
        "tools/call",
        {"name": "summarize_project", "arguments": {"project_id": project.pk}},
        headers=in_session(session_id, Accept=SSE),
    )
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert response.json()["result"]["isError"] is False


def test_a_call_with_a_progress_token_still_streams_as_it_runs(
    rpc: MCPClient, sessions_on: None, late_project: Project
) -> None:
    from mcp_endpoint import streaming

    session_id = initialize(rpc)
    streaming.stream_pool.shutdown()
    response = rpc.request(
        "tools/call",
        {
            "name": "summarize_project",
            "arguments": {"project_id": late_project.pk},
            "_meta": {"progressToken": "p-1"},
        },
        headers=in_session(session_id, Accept=SSE),
    )
    assert response["Content-Type"] == "text/event-stream"
    events = parse_events(b"".join(response.streaming_content))
    assert [e["params"]["level"] for e in events if e.get("method") == "notifications/message"] == [
        "warning",
        "info",
    ]
    # Its client hears it as it runs: it ran on a thread of the stream pool.
    assert streaming.stream_pool.executor is not None


def test_only_a_call_that_may_close_its_stream_runs_on_one() -> None:
    site = host_endpoint("speaks-test")

    @site.tool()
    def closes(context: Context) -> str:
        context.close_stream()
        return "polled"

    @site.tool()
    def closes_later(context: Context) -> str:
        def later() -> None:
            context.close_stream()

        later()
        return "polled"

    def helper(context: Context) -> None:
        context.close_stream()

    @site.tool()
    def closes_through_a_helper(context: Context) -> str:
        helper(context)
        return "not known to poll"

    @site.tool(polls=True)
    def says_it_polls(context: Context) -> str:
        helper(context)
        return "polled"

    @site.tool()
    def reads_its_caller(context: Context) -> str:
        return context.user.get_username()

    @site.tool()
    def plain() -> str:
        return "plain"

    site.add_tool(CallTool(read_only=False))
    tools = site.tools

    def speaks(name: str, arguments: Any = None) -> bool:
        tool = tools.get(name)
        assert tool is not None
        return tool.speaks(arguments or {}, tools)

    assert speaks("closes") and speaks("closes_later") and speaks("says_it_polls")
    assert not speaks("closes_through_a_helper")
    assert not speaks("reads_its_caller") and not speaks("plain")
    # call_tool speaks as the tool it runs; a name it cannot run, or itself, does not.
    assert speaks("call_tool", {"name": "closes"})
    assert not speaks("call_tool", {"name": "plain", "arguments": {}})
    for wrong in ({"name": "nope"}, {"name": ["closes"]}, {"name": "call_tool"}, {}, []):
        assert not speaks("call_tool", wrong)


def test_records_still_reach_the_client_after_logging_is_configured_again(
    rpc: MCPClient, sessions_on: None, late_project: Project
) -> None:
    import logging.config

    from django.conf import settings

    session_id = initialize(rpc)
    assert [m["level"] for m in summarize(rpc, session_id, late_project)] == ["warning", "info"]
    # What django.setup() does again (a host's asgi.py, get_asgi_application): the
    # loggers LOGGING names lose their handlers, the one sending records to clients too.
    logging.config.dictConfig(settings.LOGGING)
    assert [m["level"] for m in summarize(rpc, session_id, late_project)] == ["warning", "info"]
