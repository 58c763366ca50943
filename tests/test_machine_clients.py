"""Machine clients: the client-credentials grant, its tokens acting as a service account.

Through the real token endpoint and ``/mcp`` with Django's test client, then end to end:
the official Python SDK's ``ClientCredentialsOAuthProvider`` gets a token from a real
server process and calls tools, and a revoked machine client is refused.
"""

from __future__ import annotations

import asyncio
import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from oauth2_provider.models import AccessToken, Application

from mcp_endpoint.oauth import machine
from mcp_endpoint.oauth.models import MachineClient
from project.tracker.models import Project
from tests.live_server import LiveServer, manage, run_script

SECRET = "machine-client-secret-for-tests-only"
RESOURCE = "http://testserver/mcp"


def make_machine_client(user: Any, *, scopes: str = "", name: str = "CI job") -> Application:
    application = Application.objects.create(
        name=name,
        client_type=Application.CLIENT_CONFIDENTIAL,
        authorization_grant_type=Application.GRANT_CLIENT_CREDENTIALS,
        client_secret=SECRET,
    )
    if user is not None:
        MachineClient.objects.create(client_id=application.client_id, user=user, scopes=scopes)
    return application


def token_request(
    client: Client, application: Application, **extra: str
) -> tuple[int, dict[str, Any]]:
    basic = base64.b64encode(f"{application.client_id}:{SECRET}".encode()).decode()
    response = client.post(
        "/o/token",
        {"grant_type": "client_credentials", **extra},
        headers={"Authorization": f"Basic {basic}"},
    )
    return response.status_code, response.json()


def call_mcp(client: Client, token: str, method: str, params: dict[str, Any]) -> Any:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return client.post(
        "/mcp",
        json.dumps(body),
        content_type="application/json",
        headers={"Authorization": f"Bearer {token}", "MCP-Protocol-Version": "2025-11-25"},
    )


@pytest.fixture
def service_account(db: Any, project: Project) -> Any:
    user = get_user_model().objects.create_user("ci-bot", password=None)
    project.members.add(user)
    return user


@pytest.mark.django_db
def test_the_token_acts_as_the_service_account(
    client: Client, service_account: Any, project: Project
) -> None:
    application = make_machine_client(service_account)
    status, body = token_request(client, application, scope="read", resource=RESOURCE)
    assert status == 200, body
    assert "refresh_token" not in body
    token = AccessToken.objects.get(application=application)
    assert token.user == service_account
    assert token.resource == [RESOURCE]
    answer = call_mcp(client, body["access_token"], "tools/call", {"name": "list_projects"})
    assert answer.status_code == 200, answer.content
    result = answer.json()["result"]
    assert not result["isError"], result
    assert [p["name"] for p in result["structuredContent"]["results"]] == [project.name]
    # Its scopes are a user token's: read only, so a write is refused.
    write = call_mcp(
        client, body["access_token"], "tools/call", {"name": "create_project", "arguments": {}}
    )
    refused = write.json()["result"]
    assert refused["isError"] and "write" in json.dumps(refused), refused


@pytest.mark.django_db
def test_an_application_without_a_machine_client_gets_no_token(client: Client) -> None:
    application = make_machine_client(None)
    status, body = token_request(client, application, resource=RESOURCE)
    assert (status, body["error"]) == (400, "unauthorized_client")
    assert not AccessToken.objects.exists()


@pytest.mark.django_db
def test_the_machine_client_limits_its_scopes(client: Client, service_account: Any) -> None:
    application = make_machine_client(service_account, scopes="read")
    status, body = token_request(client, application, scope="read write", resource=RESOURCE)
    assert (status, body["error"]) == (400, "invalid_scope")
    assert token_request(client, application, scope="read", resource=RESOURCE)[0] == 200


@pytest.mark.django_db
def test_a_token_for_another_resource_is_refused_at_mcp(
    client: Client, service_account: Any
) -> None:
    application = make_machine_client(service_account)
    status, body = token_request(client, application, resource="http://testserver/other")
    assert status == 200
    answer = call_mcp(client, body["access_token"], "tools/list", {})
    assert answer.status_code == 401


@pytest.mark.django_db
def test_revoking_refuses_its_tokens_and_any_new_one(client: Client, service_account: Any) -> None:
    application = make_machine_client(service_account)
    token = token_request(client, application, resource=RESOURCE)[1]["access_token"]
    assert call_mcp(client, token, "tools/list", {}).status_code == 200
    assert machine.revoke(MachineClient.objects.get()) == 1
    assert call_mcp(client, token, "tools/list", {}).status_code == 401
    status, body = token_request(client, application, resource=RESOURCE)
    assert (status, body["error"]) == (400, "unauthorized_client")


@pytest.mark.django_db
def test_a_deactivated_service_account_is_refused(client: Client, service_account: Any) -> None:
    application = make_machine_client(service_account)
    token = token_request(client, application, resource=RESOURCE)[1]["access_token"]
    service_account.is_active = False
    service_account.save()
    assert call_mcp(client, token, "tools/list", {}).status_code == 401


@pytest.mark.django_db
def test_dynamic_registration_never_gives_the_grant(client: Client) -> None:
    response = client.post(
        "/o/register",
        json.dumps({"client_name": "sneaky", "grant_types": ["client_credentials"]}),
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_client_metadata"


@pytest.mark.django_db
def test_the_metadata_advertises_the_grant(client: Client) -> None:
    metadata = client.get("/.well-known/oauth-authorization-server").json()
    assert "client_credentials" in metadata["grant_types_supported"]


@pytest.mark.django_db
def test_the_admin_shows_whom_a_machine_client_acts_as(
    client: Client, service_account: Any, admin_user: Any
) -> None:
    make_machine_client(service_account, name="Nightly export")
    client.force_login(admin_user)
    applications = client.get("/admin/oauth2_provider/application/")
    assert applications.status_code == 200
    assert "ci-bot" in applications.content.decode()
    machines = client.get("/admin/mcp_endpoint/machineclient/")
    assert machines.status_code == 200
    assert "ci-bot" in machines.content.decode()


# -- end to end, with the official SDK ---------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(tmp_path_factory.mktemp("machine-server")) as live:
        manage(live.env, "seed_demo")
        yield live


def create_on(server: LiveServer) -> str:
    """A machine client acting as a new user who is a member of one seeded project."""
    script = f"""
import json
from django.contrib.auth import get_user_model
from oauth2_provider.models import Application
from mcp_endpoint.oauth.models import MachineClient
from project.tracker.models import Project
user = get_user_model().objects.create_user("ci-bot", password=None)
project = Project.objects.order_by("pk").first()
project.members.add(user)
app = Application.objects.create(
    name="CI job", client_type="confidential",
    authorization_grant_type="client-credentials", client_secret={SECRET!r})
MachineClient.objects.create(client_id=app.client_id, user=user)
print(json.dumps([app.client_id, project.name]))
"""
    client_id, project_name = json.loads(run_script(server.env, script).strip().splitlines()[-1])
    return f"{client_id}\n{project_name}"


async def sdk_call(server: LiveServer, client_id: str) -> list[str]:
    from mcp import Client as MCPClient
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
    from mcp.client.streamable_http import streamable_http_client

    from tests.test_oauth_live import MemoryStorage

    auth = ClientCredentialsOAuthProvider(
        server_url=server.url("/mcp"),
        storage=MemoryStorage(),
        client_id=client_id,
        client_secret=SECRET,
        scope="read",
        issuer=server.url("/o"),
    )
    async with httpx2.AsyncClient(auth=auth, timeout=30) as http:
        transport = streamable_http_client(server.url("/mcp"), http_client=http)
        async with MCPClient(transport, mode="auto") as client:
            result = await client.call_tool("list_projects", {})
            assert not result.is_error, result
            structured: dict[str, Any] = result.structured_content or {}
            return [p["name"] for p in structured["results"]]


@pytest.mark.e2e
def test_the_sdk_client_gets_a_token_calls_tools_and_is_refused_once_revoked(
    server: LiveServer, tmp_path: Path
) -> None:
    client_id, project_name = create_on(server).split("\n")
    assert asyncio.run(sdk_call(server, client_id)) == [project_name]
    run_script(
        server.env,
        "from mcp_endpoint.oauth import machine; from mcp_endpoint.oauth.models import "
        f"MachineClient; machine.revoke(MachineClient.objects.get(client_id={client_id!r}))",
    )
    # The SDK wraps its token error differently at each step; what it says is the point.
    with pytest.raises(Exception) as refused:
        asyncio.run(sdk_call(server, client_id))
    assert "unauthorized_client" in repr(refused.value) or "401" in repr(refused.value)
