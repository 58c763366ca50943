"""``call_tool``, the discovery proxy, on the generated product: a tool it runs meets the
checks a direct ``tools/call`` meets. The product's DRF throttles count its calls with
REST's requests and refuse them as they refuse a direct call; a destructive tool asks the
user first (``CONFIRM_DESTRUCTIVE_TOOLS``, a 2026-07-28 input-required round), the answer
counts only for the call it was asked about, and a declined or tampered retry leaves the
data alone. Creates, updates and deletes through it give REST's answers and REST's
refusals (a validation error, a missing object, a view's permission), and a refused write
leaves the data as it was."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

from mcp_endpoint.models import APIKey
from tests.hosts.generated.models import MODELS
from tests.hosts.parity import api_key, check_parity
from tests.test_host_generated import META, MODERN, Connection
from tests.test_throttling import tight_throttle

__all__ = ["tight_throttle"]  # three requests a minute per user, in a cache of its own

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.generated.urls")]

Warehouse = MODELS["warehouse"]
ACCEPT = {"confirm": {"action": "accept", "content": {"confirm": True}}}
DECLINE = {"confirm": {"action": "decline"}}


@pytest.fixture
def user() -> Any:
    return get_user_model().objects.create_user(
        "stella", "stella@example.com", "pw-stella-123", is_staff=True
    )


@pytest.fixture
def key(user: Any) -> str:
    _, raw = APIKey.objects.create_key(user=user, scopes="read write", name="call_tool")
    return raw


def proxied(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"name": "call_tool", "arguments": {"name": name, "arguments": arguments}}


@pytest.mark.usefixtures("tight_throttle")
def test_throttles_count_and_refuse_call_tool_as_a_direct_call(client: Client, key: str) -> None:
    headers = {"Authorization": f"Bearer {key}"}
    connection = Connection(client, key)
    # Three of the budget, spent through REST, call_tool and a direct call alike.
    assert client.get("/warehouses/", headers=headers).status_code == 200
    assert not connection.call("call_tool", proxied("list_warehouses", {})["arguments"])["isError"]
    assert not connection.call("list_warehouses", {})["isError"]
    # The fourth is refused at each door, and call_tool's refusal is the direct call's.
    assert client.get("/warehouses/", headers=headers).status_code == 429
    direct = connection.post("tools/call", {"name": "list_warehouses", "arguments": {}})
    via = connection.post("tools/call", proxied("list_warehouses", {}))
    assert direct.status_code == via.status_code == 429
    assert direct["Retry-After"] and via["Retry-After"]
    assert direct.json()["error"]["code"] == via.json()["error"]["code"]


class Asking(Connection):
    """A 2026-07-28 client that declares elicitation."""

    def __init__(self, client: Client, key: str) -> None:
        super().__init__(client, key, "modern")

    def ask(self, params: dict[str, Any]) -> dict[str, Any]:
        response = self.send(params)
        assert response.status_code == 200, response.content
        result: dict[str, Any] = response.json()["result"]
        return result

    def send(self, params: dict[str, Any]) -> Any:
        meta = {**META, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
        self.next_id += 1
        message = {
            "jsonrpc": "2.0",
            "id": self.next_id,
            "method": "tools/call",
            "params": {**params, "_meta": meta},
        }
        headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        return self.rpc.post(message, headers={**headers, "Mcp-Name": params["name"]})


def test_a_destructive_tool_through_call_tool_asks_first(
    client: Client, settings: Any, user: Any, key: str
) -> None:
    settings.MCP_ENDPOINT = {**django_settings.MCP_ENDPOINT, "CONFIRM_DESTRUCTIVE_TOOLS": True}
    first, second = (
        Warehouse.objects.create(name=n, quantity=1, owner=user) for n in ("North", "South")
    )
    asking = Asking(client, key)
    call = proxied("delete_warehouse", {"id": str(first.pk)})

    asked = asking.ask(call)
    assert asked["resultType"] == "input_required"
    question = asked["inputRequests"]["confirm"]
    assert question["method"] == "elicitation/create"
    assert (
        "delete_warehouse"
        in question["params"]["requestedSchema"]["properties"]["confirm"]["description"]
    )
    assert Warehouse.objects.filter(pk=first.pk).exists()

    # The answer counts for the call it was asked about only: not for another object.
    other = proxied("delete_warehouse", {"id": str(second.pk)})
    tampered = asking.send(
        {**other, "inputResponses": ACCEPT, "requestState": asked["requestState"]}
    )
    assert tampered.status_code == 400
    assert tampered.json()["error"]["data"]["reason"] == "invalid_request_state"
    assert Warehouse.objects.filter(pk=second.pk).exists()

    declined = asking.ask(
        {**call, "inputResponses": DECLINE, "requestState": asked["requestState"]}
    )
    assert declined["isError"] is True
    assert Warehouse.objects.filter(pk=first.pk).exists()

    again = asking.ask(call)
    done = asking.ask({**call, "inputResponses": ACCEPT, "requestState": again["requestState"]})
    assert done["isError"] is False, done
    assert not Warehouse.objects.filter(pk=first.pk).exists()
    assert Warehouse.objects.filter(pk=second.pk).exists()


def test_a_read_through_call_tool_asks_nothing(client: Client, settings: Any, key: str) -> None:
    settings.MCP_ENDPOINT = {**django_settings.MCP_ENDPOINT, "CONFIRM_DESTRUCTIVE_TOOLS": True}
    listed = Asking(client, key).ask(proxied("list_warehouses", {}))
    assert listed["resultType"] == "complete" and listed["isError"] is False


# -- writes through call_tool, against REST -------------------------------------------------------


def snapshot() -> list[Any]:
    # The team and draft viewsets serve the same model.
    return list(Warehouse.objects.order_by("pk").values_list("pk", "name", "quantity", "status"))


@pytest.mark.parametrize("staff", [True, False], ids=["staff", "member"])
def test_writes_through_call_tool_agree_with_rest(client: Client, staff: bool) -> None:
    user = get_user_model().objects.create_user(
        "wendy", "wendy@example.com", "pw-wendy-123", is_staff=staff
    )
    credential = api_key(user, "read write")
    mine = Warehouse.objects.create(name="Dock", quantity=1, owner=user)
    operations: list[tuple[str, str, str, dict[str, Any]]] = [
        ("create_warehouse", "POST", "/warehouses/", {"name": "New", "quantity": 3}),
        ("create_warehouse", "POST", "/warehouses/", {"name": "Bad", "quantity": "many"}),
        ("update_warehouse", "PATCH", f"/warehouses/{mine.pk}/", {"name": "Renamed"}),
        ("replace_warehouse", "PUT", f"/warehouses/{mine.pk}/", {"name": "R", "quantity": 2}),
        ("delete_warehouse", "DELETE", f"/warehouses/{mine.pk}/", {}),
        ("delete_warehouse", "DELETE", "/warehouses/999999/", {}),
        # Staff change everyone's warehouses; a member is refused by the view's permission.
        ("create_team_warehouse", "POST", "/team-warehouses/", {"name": "T", "quantity": 1}),
        ("update_team_warehouse", "PATCH", f"/team-warehouses/{mine.pk}/", {"name": "T2"}),
        ("delete_team_warehouse", "DELETE", f"/team-warehouses/{mine.pk}/", {}),
    ]
    statuses = []
    for tool, method, url, body in operations:
        lookup = {"id": url.rstrip("/").rsplit("/", 1)[1]} if url.count("/") > 2 else {}
        rest, _ = check_parity(
            client,
            credential,
            tool="call_tool",
            method=method,
            url=url,
            arguments={"name": tool, "arguments": {**lookup, **body}},
            rest_arguments=body,
            snapshot=snapshot,
        )
        statuses.append(rest.status_code)
    assert statuses[:6] == [201, 400, 200, 200, 204, 404]
    assert statuses[6:] == ([201, 200, 204] if staff else [403, 403, 403])
