"""Rate limits at /mcp: the host's throttles count the work, a separate limit the protocol.

The host's REST budget here is three requests a minute per user (``user`` rate), counted in
a local-memory cache of the test's own; the product endpoint ``/mcp`` and the test endpoint
``/test-mcp`` share it with ``GET /api/tasks/``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client
from rest_framework.settings import api_settings
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from mcp_endpoint.throttling import AtomicUserRateThrottle, is_work
from project.tracker.models import Project
from tests.conftest import MCPClient, make_key

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.urls_testing")]

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def call(name: str, arguments: dict[str, Any] | None = None, request_id: Any = 7) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments or {}},
    }


def set_rates(settings: Any, monkeypatch: pytest.MonkeyPatch, **changes: Any) -> None:
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, **changes}
    # DRF reloads api_settings on setting_changed, but SimpleRateThrottle copied the rates
    # into a class attribute when it was defined; point it at the reloaded ones.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", api_settings.DEFAULT_THROTTLE_RATES)


@pytest.fixture
def tight_throttle(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[float]:
    """Three requests a minute per user, counted in a cache of the test's own, by a
    throttle clock stopped in the middle of a minute (the time it yields).

    The atomic throttles count in fixed windows of the rate's period: on the wall clock, a
    test whose requests straddle the turn of a minute would start counting again halfway.
    """
    now = int(time.time() // 60) * 60 + 30.0
    monkeypatch.setattr(SimpleRateThrottle, "timer", staticmethod(lambda: now))
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
            "LOCATION": "mcp-endpoint-tests-throttle",
        }
    }
    set_rates(settings, monkeypatch, DEFAULT_THROTTLE_RATES={"user": "3/minute"})
    assert SimpleRateThrottle.THROTTLE_RATES["user"] == "3/minute"
    # Local-memory caches live as long as the process: start and end with empty counters.
    cache.clear()
    yield now
    cache.clear()


@pytest.fixture
def rpc(mcp_client: Callable[..., MCPClient], alice_key: str) -> MCPClient:
    return mcp_client(alice_key, "/test-mcp")


def assert_throttled(response: Any, request_id: Any) -> None:
    assert response.status_code == 429, response.content
    assert response["Content-Type"].startswith("application/json")
    retry_after = int(response["Retry-After"])
    assert 1 <= retry_after <= 60
    body = response.json()
    assert body["id"] == request_id
    assert "result" not in body
    assert body["error"]["code"] == -32000
    assert body["error"]["data"] == {"retry_after": retry_after}


def api_get(client: Client, key: str) -> Any:
    return client.get("/api/tasks/", headers={"Authorization": f"Bearer {key}"})


def rest_budget_left(client: Client, key: str, most: int = 3) -> int:
    """How many REST requests still pass (spending them): the budget that was left."""
    for spent in range(most + 1):
        if api_get(client, key).status_code == 429:
            return spent
    raise AssertionError("the REST budget did not run out")


def test_which_messages_are_work() -> None:
    assert is_work(call("x"))
    for method in ("resources/read", "prompts/get", "completion/complete"):
        assert is_work({"jsonrpc": "2.0", "id": 1, "method": method})
    for message in (PING, INITIALIZE, INITIALIZED, {"method": ["tools/call"]}, [call("x")], 3):
        assert not is_work(message)


# -- the host's budget counts the work only ----------------------------------------------


@pytest.mark.usefixtures("tight_throttle")
def test_protocol_messages_do_not_spend_the_rest_budget(
    rpc: MCPClient, client: Client, alice_key: str
) -> None:
    for message in (
        INITIALIZE,
        INITIALIZED,
        PING,
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        for _ in range(4):
            assert rpc.post(message).status_code in (200, 202)
    assert rest_budget_left(client, alice_key) == 3


@pytest.mark.usefixtures("tight_throttle")
def test_a_legacy_session_costs_one_from_the_rest_budget(
    rpc: MCPClient, client: Client, alice_key: str
) -> None:
    # What an SDK sends for one tool call in the handshake era.
    assert rpc.post(INITIALIZE).status_code == 200
    assert rpc.post(INITIALIZED).status_code == 202
    assert rpc.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 200
    answer = rpc.post(call("no_arguments"))
    assert answer.status_code == 200 and answer.json()["result"]["isError"] is False
    assert rest_budget_left(client, alice_key) == 2


@pytest.mark.usefixtures("tight_throttle")
def test_work_over_the_budget_is_429_with_the_request_id(rpc: MCPClient) -> None:
    for _ in range(3):
        assert rpc.post(call("no_arguments")).status_code == 200
    assert_throttled(rpc.post(call("no_arguments", request_id="call-4")), "call-4")
    # Protocol messages still answer: the handshake of a throttled client is not refused.
    assert rpc.post(PING).json() == {"jsonrpc": "2.0", "id": 1, "result": {}}


@pytest.mark.usefixtures("tight_throttle")
def test_a_refused_write_writes_nothing(rpc: MCPClient, alice: Any) -> None:
    for number in range(3):
        assert rpc.post(call("create_project", {"name": f"p{number}"})).status_code == 200
    assert Project.objects.count() == 3
    assert_throttled(rpc.post(call("create_project", {"name": "one too many"}, 9)), 9)
    assert not Project.objects.filter(name="one too many").exists()
    assert Project.objects.count() == 3


@pytest.mark.usefixtures("tight_throttle")
def test_each_work_message_of_a_batch_counts(
    rpc: MCPClient, client: Client, alice_key: str
) -> None:
    answer = rpc.post(
        [call("no_arguments", request_id=1), PING, call("no_arguments", request_id=2)]
    )
    assert answer.status_code == 200
    assert [a["id"] for a in answer.json()] == [1, 1, 2]
    assert all("result" in a for a in answer.json())
    assert rest_budget_left(client, alice_key) == 1


@pytest.mark.usefixtures("tight_throttle")
def test_a_batch_over_the_budget(rpc: MCPClient, alice: Any) -> None:
    batch = [call("create_project", {"name": f"b{n}"}, request_id=n) for n in range(4)]
    answer = rpc.post(batch)
    # Three run; the fourth is refused in its place, and says when to retry.
    assert answer.status_code == 200
    assert 1 <= int(answer["Retry-After"]) <= 60
    body = answer.json()
    assert [a["id"] for a in body] == [0, 1, 2, 3]
    assert all("result" in a for a in body[:3])
    assert body[3]["error"]["code"] == -32000
    assert body[3]["error"]["data"]["retry_after"] == int(answer["Retry-After"])
    assert sorted(Project.objects.values_list("name", flat=True)) == ["b0", "b1", "b2"]
    # A batch whose every message is refused is refused as a whole.
    refused = rpc.post([call("create_project", {"name": "late"}, request_id="x")])
    assert refused.status_code == 429
    assert refused.json()[0]["id"] == "x"
    assert refused.json()[0]["error"]["code"] == -32000
    assert not Project.objects.filter(name="late").exists()


@pytest.mark.usefixtures("tight_throttle")
def test_the_budget_is_per_user_and_shared_with_rest(
    mcp_client: Callable[..., MCPClient], client: Client, alice: Any, alice_key: str, bob: Any
) -> None:
    # REST spends the MCP budget; another key of the same user shares it; bob has his own.
    for _ in range(2):
        assert api_get(client, alice_key).status_code == 200
    other = mcp_client(make_key(alice, "read"), "/test-mcp")
    assert other.post(call("no_arguments")).status_code == 200
    assert_throttled(other.post(call("no_arguments", request_id=5)), 5)
    assert api_get(client, alice_key).status_code == 429
    assert mcp_client(make_key(bob), "/test-mcp").post(call("no_arguments")).status_code == 200


@pytest.mark.usefixtures("tight_throttle")
def test_mcp_work_spends_the_rest_budget(rpc: MCPClient, client: Client, alice_key: str) -> None:
    for _ in range(3):
        assert rpc.post(call("no_arguments")).status_code == 200
    response = api_get(client, alice_key)
    assert response.status_code == 429
    assert "Retry-After" in response


# -- the protocol limit ------------------------------------------------------------------


@pytest.fixture
def tight_protocol_limit(settings: Any, tight_throttle: float) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "PROTOCOL_RATE": "3/minute"}


@pytest.mark.usefixtures("tight_protocol_limit")
def test_protocol_messages_have_a_limit_of_their_own(
    rpc: MCPClient, client: Client, alice_key: str
) -> None:
    for _ in range(3):
        assert rpc.post(PING).status_code == 200
    assert_throttled(rpc.post({**PING, "id": "ping-4"}), "ping-4")
    # Notifications are never refused (nothing happens for them), and the work still runs.
    assert rpc.post(INITIALIZED).status_code == 202
    assert rpc.post(call("no_arguments")).status_code == 200
    assert rest_budget_left(client, alice_key) == 2


@pytest.mark.usefixtures("tight_protocol_limit")
def test_the_protocol_limit_is_per_credential(
    mcp_client: Callable[..., MCPClient], alice: Any, alice_key: str
) -> None:
    first = mcp_client(alice_key, "/test-mcp")
    for _ in range(3):
        first.post(PING)
    assert_throttled(first.post(PING), 1)
    assert mcp_client(make_key(alice, "read"), "/test-mcp").post(PING).status_code == 200


@pytest.mark.usefixtures("tight_throttle")
def test_the_protocol_limit_can_be_off(settings: Any, rpc: MCPClient) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "PROTOCOL_RATE": None}
    for _ in range(10):
        assert rpc.post(PING).status_code == 200


# -- atomic counting ---------------------------------------------------------------------


@pytest.fixture
def atomic_rest_throttle(
    settings: Any, monkeypatch: pytest.MonkeyPatch, tight_throttle: float
) -> None:
    set_rates(
        settings,
        monkeypatch,
        DEFAULT_THROTTLE_CLASSES=["mcp_endpoint.throttling.AtomicUserRateThrottle"],
        DEFAULT_THROTTLE_RATES={"user": "3/minute"},
    )
    # APIView copied the default classes when it was defined, as a host's settings would
    # have them from the start.
    monkeypatch.setattr(APIView, "throttle_classes", api_settings.DEFAULT_THROTTLE_CLASSES)


@pytest.mark.usefixtures("atomic_rest_throttle")
def test_the_atomic_throttle_shares_one_budget_between_rest_and_mcp(
    rpc: MCPClient, client: Client, alice_key: str
) -> None:
    assert api_get(client, alice_key).status_code == 200
    assert rpc.post(call("no_arguments")).status_code == 200
    assert api_get(client, alice_key).status_code == 200
    assert_throttled(rpc.post(call("no_arguments", request_id=4)), 4)
    refused = api_get(client, alice_key)
    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 60


@pytest.mark.usefixtures("tight_throttle")
def test_the_atomic_throttle_counts_in_one_cache_entry_per_window(alice: Any) -> None:
    from rest_framework.request import Request
    from rest_framework.test import APIRequestFactory

    request = Request(APIRequestFactory().get("/"))
    request.user = alice
    throttle = AtomicUserRateThrottle()
    view = APIView()
    assert [throttle.allow_request(request, view) for _ in range(5)] == [True] * 3 + [False] * 2
    window = int(throttle.now // throttle.duration)
    assert cache.get(f"throttle_user_{alice.pk}:{window}") == 5
    wait = throttle.wait()
    assert wait is not None and 0 < wait <= 60


def test_the_protocol_limit_holds_with_other_processes_counting(
    settings: Any, rpc: MCPClient, alice_key: str, tight_throttle: float
) -> None:
    """Each process shares its count every few messages, and every message near the limit."""
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "PROTOCOL_RATE": "30/minute"}
    prefix = alice_key.rsplit("_", 1)[0]
    window = int(tight_throttle // 60)
    # Other processes have answered 20 of this key's protocol messages this minute.
    cache.set(f"throttle_mcp_protocol_api_key:{prefix}:{window}", 20, 120)
    statuses = [rpc.post(PING).status_code for _ in range(15)]
    assert statuses == [200] * 10 + [429] * 5
    assert cache.get(f"throttle_mcp_protocol_api_key:{prefix}:{window}") == 35
