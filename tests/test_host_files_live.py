"""The files host (:mod:`tests.hosts.files`) served by gunicorn on loopback, with every host
mounted (``tests/hosts/settings.py``), and the official Python SDK as the client: the
picture, the printable PDF and the CSV export arrive as embedded resources whose bytes are
the REST API's, in the legacy and the modern connection modes."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import LiveServer, run_script

pytestmark = pytest.mark.e2e

SEED = """
import json
from django.contrib.auth import get_user_model
from mcp_endpoint.models import APIKey
from tests.hosts.tutorial.models import Snippet
user = get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")
snippet = Snippet.objects.create(title="hello", code="def hello():\\n    return 1\\n", owner=user)
_, key = APIKey.objects.create_key(user=user, scopes="read", name="files e2e")
print(json.dumps({"key": key, "snippet": snippet.pk}))
"""


@dataclass
class Host:
    server: LiveServer
    key: str
    snippet: int

    def url(self, path: str) -> str:
        return self.server.url(f"/hosts/files{path}")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    workdir: Path = tmp_path_factory.mktemp("files-host")
    root = Path(__file__).resolve().parent.parent
    env = {"DJANGO_SETTINGS_MODULE": "tests.hosts.settings", "PYTHONPATH": str(root)}
    with LiveServer(workdir, workers=1, env=env) as server:
        output = run_script(server.env, SEED)
        facts = json.loads(output.strip().splitlines()[-1])
        yield Host(server, facts["key"], facts["snippet"])


def rest(host: Host, path: str) -> tuple[str, bytes]:
    response = httpx2.get(
        host.url(path), headers={"Authorization": f"Bearer {host.key}"}, timeout=30
    )
    assert response.status_code == 200, response.text
    return response.headers["content-type"].split(";")[0], response.content


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
def test_the_sdk_gets_the_files_rest_serves(host: Host, mode: str) -> None:
    got: dict[str, tuple[str | None, str, bytes]] = {}

    async def main() -> None:
        async with httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {host.key}"}, timeout=30
        ) as http:
            transport = streamable_http_client(host.url("/mcp"), http_client=http)
            async with Client(transport, mode=mode) as client:
                tools = {t.name: t for t in (await client.list_tools()).tools}
                assert tools["picture_snippet"].output_schema is None
                assert "events_snippet" not in tools
                for name, arguments in (
                    ("picture_snippet", {"id": host.snippet}),
                    ("printable_snippet", {"id": host.snippet}),
                    ("export_snippets", {}),
                ):
                    result = await client.call_tool(name, arguments)
                    assert result.is_error is False, result
                    about, embedded = result.content
                    assert about.type == "text"
                    assert embedded.type == "resource"
                    resource = embedded.resource
                    blob = getattr(resource, "blob", None)
                    body = (
                        base64.b64decode(blob)
                        if blob is not None
                        else getattr(resource, "text", "").encode("utf-8")
                    )
                    got[name] = (resource.mime_type, str(resource.uri), body)

    anyio.run(main)
    for name, path in (
        ("picture_snippet", f"/snippets/{host.snippet}/picture/"),
        ("printable_snippet", f"/snippets/{host.snippet}/printable/"),
        ("export_snippets", "/snippets/export/"),
    ):
        media, body = rest(host, path)
        assert got[name] == (media, host.url(path), body), name
    assert got["picture_snippet"][2].startswith(b"\x89PNG")
    assert got["export_snippets"][0] == "text/csv"
