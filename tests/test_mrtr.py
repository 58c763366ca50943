"""Multi round-trip requests (2026-07-28): input-required results, signed state, confirmation.

The fixture endpoint's ``test_input_required_result_*`` tools show the mechanism; the
product's destructive tools use it to ask the user before they delete anything.
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable
from typing import Any

import pytest
from django.core import signing

from mcp_endpoint.models import APIKey
from project.tracker.models import Project, Task
from tests.conftest import MCPClient, make_key
from tests.test_modern import FIXTURE, MODERN, Modern, error_of, meta, result_of

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("private_cache")]

ACCEPT_NAME = {"action": "accept", "content": {"name": "Alice"}}
ALL_CAPABILITIES = {"elicitation": {}, "sampling": {}, "roots": {}}


class Rounds(Modern):
    """A modern client that declares every input capability unless told otherwise."""

    def call(
        self,
        name: str,
        arguments: dict[str, Any] | None = None,
        *,
        responses: Any = None,
        state: Any = None,
        capabilities: dict[str, Any] | None = None,
        omit_responses: bool = False,
    ) -> Any:
        params: dict[str, Any] = {"name": name, "arguments": arguments or {}}
        if not omit_responses and responses is not None:
            params["inputResponses"] = responses
        if state is not None:
            params["requestState"] = state
        caps = ALL_CAPABILITIES if capabilities is None else capabilities
        return self.post("tools/call", params, capabilities=caps)


@pytest.fixture
def rounds(mcp_client: Callable[..., MCPClient]) -> Rounds:
    return Rounds(mcp_client(None, FIXTURE))


def input_required(response: Any) -> dict[str, Any]:
    result = result_of(response)
    assert result["resultType"] == "input_required", result
    assert "content" not in result
    # Never cacheable, even when the method's complete results are.
    assert not {"ttlMs", "cacheScope"} & set(result)
    return result


# -- the mechanism, on the fixture ---------------------------------------------------------------


def test_elicitation_round_trip(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_elicitation"))
    request = first["inputRequests"]["user_name"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["message"] == "What is your name?"
    assert request["params"]["requestedSchema"]["required"] == ["name"]
    assert isinstance(first["requestState"], str)
    second = result_of(
        rounds.call(
            "test_input_required_result_elicitation",
            responses={"user_name": ACCEPT_NAME},
            state=first["requestState"],
        )
    )
    assert second["resultType"] == "complete"
    assert second["content"] == [{"type": "text", "text": "Hello, Alice!"}]


def test_request_state_comes_back_verified(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_request_state"))
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    done = result_of(
        rounds.call(
            "test_input_required_result_request_state",
            responses=answer,
            state=first["requestState"],
        )
    )
    assert "state-ok" in done["content"][0]["text"]


def test_tampered_state_is_refused(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_tampered_state"))
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    response = rounds.call(
        "test_input_required_result_tampered_state",
        responses=answer,
        state=first["requestState"] + "-TAMPERED",
    )
    error = error_of(response, 400, -32602, rounds.next_id)
    assert error["message"] == "Invalid or expired requestState"
    assert error["data"] == {"reason": "invalid_request_state"}


def test_state_with_a_rewritten_payload_is_refused(rounds: Rounds) -> None:
    # The payload is readable; changing it (and keeping the old signature) breaks the HMAC.
    first = input_required(rounds.call("test_input_required_result_request_state"))
    payload = signing.loads(first["requestState"], salt="mcp_endpoint.request_state")
    payload["s"] = {"tool": "request_state", "step": "done"}
    body = base64.urlsafe_b64encode(zlib.compress(json.dumps(payload).encode())).decode()
    forged = "." + body.rstrip("=") + ":" + first["requestState"].split(":", 1)[1]
    response = rounds.call(
        "test_input_required_result_request_state",
        responses={"confirm": {"action": "accept", "content": {"ok": True}}},
        state=forged,
    )
    error_of(response, 400, -32602, rounds.next_id)


def test_state_works_once(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_request_state"))
    answer = {"confirm": {"action": "accept", "content": {"ok": True}}}
    state = first["requestState"]
    result_of(rounds.call("test_input_required_result_request_state", responses=answer,
                          state=state))  # fmt: skip
    again = rounds.call("test_input_required_result_request_state", responses=answer, state=state)
    error_of(again, 400, -32602, rounds.next_id)


def test_state_of_another_tool_is_refused(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_request_state"))
    response = rounds.call(
        "test_input_required_result_tampered_state",
        responses={"confirm": {"action": "accept", "content": {"ok": True}}},
        state=first["requestState"],
    )
    error_of(response, 400, -32602, rounds.next_id)


def test_expired_state_is_refused(rounds: Rounds, monkeypatch: pytest.MonkeyPatch) -> None:
    first = input_required(rounds.call("test_input_required_result_request_state"))
    import time as real_time

    later = real_time.time() + 601  # the default REQUEST_STATE_TTL is 600 s
    monkeypatch.setattr(signing.time, "time", lambda: later)
    response = rounds.call(
        "test_input_required_result_request_state",
        responses={"confirm": {"action": "accept", "content": {"ok": True}}},
        state=first["requestState"],
    )
    error_of(response, 400, -32602, rounds.next_id)


def test_multi_round(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_multi_round"))
    assert list(first["inputRequests"]) == ["step1"]
    second = input_required(
        rounds.call(
            "test_input_required_result_multi_round",
            responses={"step1": ACCEPT_NAME},
            state=first["requestState"],
        )
    )
    assert list(second["inputRequests"]) == ["step2"]
    assert second["requestState"] != first["requestState"]
    done = result_of(
        rounds.call(
            "test_input_required_result_multi_round",
            responses={"step2": {"action": "accept", "content": {"color": "blue"}}},
            state=second["requestState"],
        )
    )
    assert done["content"][0]["text"] == "state-ok: Alice likes blue"


def test_multiple_inputs_in_one_round(rounds: Rounds) -> None:
    first = input_required(rounds.call("test_input_required_result_multiple_inputs"))
    methods = {k: v["method"] for k, v in first["inputRequests"].items()}
    assert methods == {
        "user_name": "elicitation/create",
        "greeting": "sampling/createMessage",
        "client_roots": "roots/list",
    }
    # Answering only part of it gets the rest asked again, not an error.
    partial = input_required(
        rounds.call(
            "test_input_required_result_multiple_inputs",
            responses={"user_name": ACCEPT_NAME},
            state=first["requestState"],
        )
    )
    assert set(partial["inputRequests"]) == {"greeting", "client_roots"}


def test_wrong_keys_get_the_question_again(rounds: Rounds) -> None:
    response = rounds.call(
        "test_input_required_result_elicitation",
        responses={"wrong_key": {"action": "accept", "content": {"data": "x"}}},
    )
    assert list(input_required(response)["inputRequests"]) == ["user_name"]


def test_extra_keys_are_ignored(rounds: Rounds) -> None:
    response = rounds.call(
        "test_input_required_result_elicitation",
        responses={"user_name": ACCEPT_NAME, "unknown": {"action": "accept", "content": {}}},
    )
    assert result_of(response)["content"][0]["text"] == "Hello, Alice!"


@pytest.mark.parametrize("responses", [None, 12345, {"user_name": 12345}, ["user_name"]])
def test_malformed_input_responses(rounds: Rounds, responses: Any) -> None:
    params = {
        "name": "test_input_required_result_elicitation",
        "arguments": {},
        "inputResponses": responses,
    }
    response = rounds.post("tools/call", params, capabilities=ALL_CAPABILITIES)
    error = error_of(response, 400, -32602, rounds.next_id)
    assert "inputResponses" in error["message"]


def test_only_declared_capabilities_are_asked_for(rounds: Rounds) -> None:
    result = input_required(
        rounds.call("test_input_required_result_capabilities", capabilities={"sampling": {}})
    )
    assert [r["method"] for r in result["inputRequests"].values()] == ["sampling/createMessage"]


def test_asking_without_the_capability_is_refused(rounds: Rounds) -> None:
    response = rounds.call("test_input_required_result_elicitation", capabilities={})
    error = error_of(response, 400, -32021, rounds.next_id)
    assert error["data"] == {"requiredCapabilities": {"elicitation": {}}}


def test_a_prompt_can_ask_too(rounds: Rounds) -> None:
    first = input_required(
        rounds.post(
            "prompts/get",
            {"name": "test_input_required_result_prompt"},
            capabilities=ALL_CAPABILITIES,
        )
    )
    assert list(first["inputRequests"]) == ["user_context"]
    done = result_of(
        rounds.post(
            "prompts/get",
            {
                "name": "test_input_required_result_prompt",
                "inputResponses": {
                    "user_context": {"action": "accept", "content": {"context": "tests"}}
                },
                "requestState": first["requestState"],
            },
            capabilities=ALL_CAPABILITIES,
        )
    )
    assert done["resultType"] == "complete"
    assert done["messages"][0]["content"]["text"] == "Use this context: tests"


def test_lists_never_ask(rounds: Rounds) -> None:
    for method in ("tools/list", "prompts/list", "resources/list"):
        assert result_of(rounds.post(method))["resultType"] == "complete"


def test_a_legacy_call_cannot_be_asked_for_input(mcp_client: Callable[..., MCPClient]) -> None:
    # The fixture has sessions on; without a client that declares elicitation in its
    # session, the tool reports that it cannot get the input.
    rpc = mcp_client(None, FIXTURE)
    init = rpc.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    )
    session = init["Mcp-Session-Id"]
    response = rpc.request(
        "tools/call",
        {"name": "test_input_required_result_elicitation", "arguments": {}},
        headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
    )
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "input_unavailable"
    assert "resultType" not in result


# -- the product: confirming destructive tools ---------------------------------------------------


@pytest.fixture
def confirming(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CONFIRM_DESTRUCTIVE_TOOLS": True}


@pytest.fixture
def task(project: Project) -> Task:
    return Task.objects.get(project=project, title="Write copy")


@pytest.fixture
def alice_rounds(mcp_client: Callable[..., MCPClient], alice_key: str) -> Rounds:
    return Rounds(mcp_client(alice_key))


ACCEPT = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def ask_to_delete(rounds: Rounds, task: Task) -> dict[str, Any]:
    first = input_required(
        rounds.call("delete_task", {"id": task.pk}, capabilities={"elicitation": {}})
    )
    return first


@pytest.mark.usefixtures("confirming")
def test_confirmation_asked_and_given(alice_rounds: Rounds, task: Task) -> None:
    first = ask_to_delete(alice_rounds, task)
    request = first["inputRequests"]["confirm"]
    assert request["method"] == "elicitation/create"
    # The task as a person names it, from its REST representation, not raw JSON.
    assert request["params"]["message"] == (
        "Delete task: the task “Write copy”. This cannot be undone. Go ahead?"
    )
    assert request["params"]["requestedSchema"]["properties"]["confirm"]["type"] == "boolean"
    assert Task.objects.filter(pk=task.pk).exists()  # nothing happened yet
    done = result_of(
        alice_rounds.call(
            "delete_task",
            {"id": task.pk},
            responses=ACCEPT,
            state=first["requestState"],
            capabilities={"elicitation": {}},
        )
    )
    assert done["resultType"] == "complete"
    assert done["isError"] is False, done
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
@pytest.mark.parametrize(
    "answer",
    [
        {"action": "decline"},
        {"action": "cancel"},
        {"action": "accept", "content": {"confirm": False}},
        {"action": "accept", "content": {}},
    ],
)
def test_confirmation_refused(alice_rounds: Rounds, task: Task, answer: dict[str, Any]) -> None:
    first = ask_to_delete(alice_rounds, task)
    done = result_of(
        alice_rounds.call(
            "delete_task",
            {"id": task.pk},
            responses={"confirm": answer},
            state=first["requestState"],
            capabilities={"elicitation": {}},
        )
    )
    assert done["isError"] is True
    assert done["structuredContent"]["error"]["code"] == "not_confirmed"
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_a_client_without_elicitation_is_never_asked(alice_rounds: Rounds, task: Task) -> None:
    done = result_of(alice_rounds.call("delete_task", {"id": task.pk}, capabilities={}))
    assert done["resultType"] == "complete"
    assert done["isError"] is False
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_a_legacy_client_without_a_session_is_refused_not_asked(
    mcp_client: Callable[..., MCPClient], alice_key: str, task: Task
) -> None:
    # Whether it could be asked was said at initialize, which nothing kept: refused, and
    # told what works.
    result = mcp_client(alice_key).call("delete_task", {"id": task.pk})
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "confirmation_unavailable"
    assert "2026-07-28" in error["message"] and "SESSIONS" in error["message"]
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_a_legacy_session_that_cannot_stream_is_refused(
    settings: Any, mcp_client: Callable[..., MCPClient], alice_key: str, task: Task
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    rpc = mcp_client(alice_key)
    opened = rpc.request(
        "initialize",
        {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}}, "clientInfo": {}},
    )
    session = opened["Mcp-Session-Id"]
    response = rpc.post(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "delete_task", "arguments": {"id": task.pk}},
        },
        headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] == "confirmation_unavailable"
    assert "text/event-stream" in result["structuredContent"]["error"]["message"]
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_a_legacy_session_without_elicitation_is_never_asked(
    settings: Any, mcp_client: Callable[..., MCPClient], alice_key: str, task: Task
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "SESSIONS": True}
    rpc = mcp_client(alice_key)
    opened = rpc.request(
        "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {}}
    )
    response = rpc.post(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "delete_task", "arguments": {"id": task.pk}},
        },
        headers={"Mcp-Session-Id": opened["Mcp-Session-Id"], "MCP-Protocol-Version": "2025-11-25"},
    )
    assert response.json()["result"]["isError"] is False
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_read_tools_are_never_confirmed(alice_rounds: Rounds, project: Project) -> None:
    result = result_of(
        alice_rounds.call("get_project", {"id": project.pk}, capabilities={"elicitation": {}})
    )
    assert result["resultType"] == "complete"


def test_no_confirmation_when_the_setting_is_off(
    alice_rounds: Rounds, task: Task, settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "CONFIRM_DESTRUCTIVE_TOOLS": False}
    done = result_of(
        alice_rounds.call("delete_task", {"id": task.pk}, capabilities={"elicitation": {}})
    )
    assert done["resultType"] == "complete"
    assert not Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_an_answer_without_the_state_is_asked_again(alice_rounds: Rounds, task: Task) -> None:
    # A client cannot skip the question by sending an answer it was never asked for.
    response = alice_rounds.call(
        "delete_task", {"id": task.pk}, responses=ACCEPT, capabilities={"elicitation": {}}
    )
    input_required(response)
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_tampered_confirmation_state(alice_rounds: Rounds, task: Task) -> None:
    first = ask_to_delete(alice_rounds, task)
    state = first["requestState"]
    flipped = state[:-3] + ("A" if state[-3] != "A" else "B") + state[-2:]
    response = alice_rounds.call(
        "delete_task",
        {"id": task.pk},
        responses=ACCEPT,
        state=flipped,
        capabilities={"elicitation": {}},
    )
    error_of(response, 400, -32602, alice_rounds.next_id)
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_state_replayed_by_another_credential(
    alice_rounds: Rounds, mcp_client: Callable[..., MCPClient], bob: Any, task: Task
) -> None:
    first = ask_to_delete(alice_rounds, task)
    bob_rounds = Rounds(mcp_client(make_key(bob, "read write", name="bob")))
    response = bob_rounds.call(
        "delete_task",
        {"id": task.pk},
        responses=ACCEPT,
        state=first["requestState"],
        capabilities={"elicitation": {}},
    )
    error = error_of(response, 400, -32602, bob_rounds.next_id)
    assert error["data"] == {"reason": "invalid_request_state"}
    assert Task.objects.filter(pk=task.pk).exists()


@pytest.mark.usefixtures("confirming")
def test_state_replayed_by_another_key_of_the_same_user(
    alice_rounds: Rounds, mcp_client: Callable[..., MCPClient], alice: Any, task: Task
) -> None:
    first = ask_to_delete(alice_rounds, task)
    other = Rounds(mcp_client(make_key(alice, "read write", name="alice again")))
    response = other.call(
        "delete_task",
        {"id": task.pk},
        responses=ACCEPT,
        state=first["requestState"],
        capabilities={"elicitation": {}},
    )
    error_of(response, 400, -32602, other.next_id)
    assert APIKey.objects.filter(user=alice).count() == 2


@pytest.mark.usefixtures("confirming")
def test_confirmation_is_bound_to_the_arguments(
    alice_rounds: Rounds, task: Task, project: Project
) -> None:
    other = Task.objects.get(project=project, title="Ship it")
    first = ask_to_delete(alice_rounds, task)
    response = alice_rounds.call(
        "delete_task",
        {"id": other.pk},
        responses=ACCEPT,
        state=first["requestState"],
        capabilities={"elicitation": {}},
    )
    error_of(response, 400, -32602, alice_rounds.next_id)
    assert Task.objects.filter(pk__in=[task.pk, other.pk]).count() == 2


@pytest.mark.usefixtures("confirming")
def test_confirmation_state_works_once(alice_rounds: Rounds, task: Task, project: Project) -> None:
    first = ask_to_delete(alice_rounds, task)
    arguments = {"id": task.pk}
    for expected in (200, 400):
        response = alice_rounds.call(
            "delete_task",
            arguments,
            responses=ACCEPT,
            state=first["requestState"],
            capabilities={"elicitation": {}},
        )
        assert response.status_code == expected, response.content


def test_state_needs_the_modern_headers_to_match(alice_rounds: Rounds) -> None:
    # A sanity check of the helper: a plain modern call goes through unchanged.
    assert result_of(alice_rounds.post("tools/list"))["resultType"] == "complete"
    assert meta()["io.modelcontextprotocol/protocolVersion"] == MODERN
