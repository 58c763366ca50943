"""The files host (:mod:`tests.hosts.files`): actions that answer with a PDF, a PNG, a CSV
export, a ``FileResponse`` download and a streamed file are tools whose result is an embedded
resource at the action's REST URL, byte for byte what REST serves; a file over
``MAX_BINARY_RESULT_BYTES`` is an error, never a cut file; an event stream is left out
(``W032``)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from tests.conftest import MCPClient
from tests.hosts.parity import CREDENTIAL_KINDS, Credential, call_rest, check_parity
from tests.hosts.tutorial.models import Snippet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.files.urls")]

CODE = "def hello():\n    return 'héllo'\n"


@pytest.fixture
def owner() -> Any:
    return get_user_model().objects.create_user("olive", "olive@example.com", "pw-olive-123")


@pytest.fixture
def snippet(owner: Any) -> Snippet:
    Snippet.objects.create(title="loop", code="for i in x: pass", owner=owner)
    return Snippet.objects.create(title="hello", code=CODE, owner=owner)


def snapshot() -> list[Any]:
    return list(Snippet.objects.order_by("pk").values_list("pk", "title"))


# tool, REST path (with {pk}), the file's type, whether it comes as text
FILES = [
    ("printable_snippet", "/snippets/{pk}/printable/", "application/pdf", False),
    ("picture_snippet", "/snippets/{pk}/picture/", "image/png", False),
    ("download_snippet", "/snippets/{pk}/download/", "application/pdf", False),
    ("source_snippet", "/snippets/{pk}/source/", "text/x-python", True),
    ("export_snippets", "/snippets/export/", "text/csv", True),
]


def rest_bytes(client: Client, credential: Credential, path: str) -> tuple[int, str, bytes]:
    response = call_rest(client, credential.bearer, "GET", path, {})
    body = b"".join(response.streaming_content) if response.streaming else response.content
    return response.status_code, response["Content-Type"].split(";")[0], body


def arguments_for(tool: str, snippet: Snippet) -> dict[str, Any]:
    return {} if tool == "export_snippets" else {"id": snippet.pk}


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
@pytest.mark.parametrize(("tool", "path", "media", "as_text"), FILES, ids=[f[0] for f in FILES])
def test_the_file_is_what_rest_serves(
    kind: str,
    tool: str,
    path: str,
    media: str,
    as_text: bool,
    client: Client,
    owner: Any,
    snippet: Snippet,
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    url = path.format(pk=snippet.pk)
    status, rest_media, body = rest_bytes(client, credential, url)
    assert (status, rest_media) == (200, media)
    result = MCPClient(client, "/mcp", credential.bearer).call(tool, arguments_for(tool, snippet))
    assert result["isError"] is False, result
    assert "structuredContent" not in result
    about, embedded = result["content"]
    assert embedded["type"] == "resource"
    resource = embedded["resource"]
    assert resource["uri"] == f"http://testserver{url}"
    assert resource["mimeType"] == media
    if as_text:
        assert "blob" not in resource
        assert resource["text"].encode("utf-8") == body
    else:
        assert "text" not in resource
        assert base64.b64decode(resource["blob"]) == body
    assert about["type"] == "text"
    assert about["text"].endswith(
        f"{media}, {len(body)} bytes, attached as a resource (http://testserver{url})."
    )


def test_the_files_are_real_files(client: Client, owner: Any, snippet: Snippet) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    blob = rpc.call("printable_snippet", {"id": snippet.pk})["content"][1]["resource"]["blob"]
    pdf = base64.b64decode(blob)
    assert pdf.startswith(b"%PDF-1.4") and pdf.rstrip().endswith(b"%%EOF")
    png = rpc.call("picture_snippet", {"id": snippet.pk})["content"][1]["resource"]["blob"]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    export = rpc.call("export_snippets")["content"][1]["resource"]["text"]
    assert export.splitlines()[0] == "id,title,language"
    assert len(export.splitlines()) == 3


def test_a_download_names_its_file(client: Client, owner: Any, snippet: Snippet) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    about = rpc.call("download_snippet", {"id": snippet.pk})["content"][0]["text"]
    assert about.startswith(f"snippet-{snippet.pk}.pdf: application/pdf, ")
    about = rpc.call("source_snippet", {"id": snippet.pk})["content"][0]["text"]
    assert about.startswith(f"snippet-{snippet.pk}.py: text/x-python, ")


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-11-25"])
def test_every_revision_gets_the_same_resource(
    version: str, client: Client, owner: Any, snippet: Snippet
) -> None:
    """EmbeddedResource with a blob or text is a tool result's content since 2024-11-05."""
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    response = rpc.request(
        "tools/call",
        {"name": "picture_snippet", "arguments": {"id": snippet.pk}},
        headers={"MCP-Protocol-Version": version},
    )
    assert response.status_code == 200, response.content
    [_, embedded] = response.json()["result"]["content"]
    assert set(embedded) == {"type", "resource"}
    assert set(embedded["resource"]) == {"uri", "mimeType", "blob"}


@pytest.mark.parametrize(("tool", "path", "media", "as_text"), FILES, ids=[f[0] for f in FILES])
def test_rest_and_mcp_agree_on_a_missing_snippet(
    tool: str, path: str, media: str, as_text: bool, client: Client, owner: Any
) -> None:
    if tool == "export_snippets":
        pytest.skip("a list has nothing to miss")
    check_parity(
        client,
        CREDENTIAL_KINDS["key_read"](owner),
        tool=tool,
        method="GET",
        url=path.format(pk=999999),
        arguments={"id": 999999},
        rest_arguments={},
        snapshot=snapshot,
    )


@pytest.mark.parametrize(
    ("tool", "size_known"),
    [
        ("printable_snippet", True),  # rendered by DRF: its length is known
        ("download_snippet", True),  # a FileResponse declares its Content-Length
        ("source_snippet", False),  # streamed: read no further than the limit
    ],
)
def test_a_file_over_the_limit_is_an_error_not_a_cut_file(
    tool: str, size_known: bool, settings: Any, client: Client, owner: Any, snippet: Snippet
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_BINARY_RESULT_BYTES": 20}
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    result = rpc.call(tool, {"id": snippet.pk})
    assert result["isError"] is True
    assert [c["type"] for c in result["content"]] == ["text"]
    error = result["structuredContent"]["error"]
    assert error["code"] == "too_large"
    assert error["max_bytes"] == 20
    assert "MAX_BINARY_RESULT_BYTES" in error["message"]
    assert ("size" in error) is size_known


def test_a_file_at_the_limit_is_whole(
    settings: Any, client: Client, owner: Any, snippet: Snippet
) -> None:
    size = len(CODE.encode())
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "MAX_BINARY_RESULT_BYTES": size}
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    result = rpc.call("source_snippet", {"id": snippet.pk})
    assert result["isError"] is False, result
    assert result["content"][1]["resource"]["text"] == CODE


def test_tools_and_checks() -> None:
    from tests.hosts.files.urls import endpoint

    names = {t.name for t in endpoint.tools}
    assert names == {
        "list_snippets",
        "get_snippet",
        "printable_snippet",
        "picture_snippet",
        "download_snippet",
        "source_snippet",
        "export_snippets",
        "events_snippet",
        "legacy_export_snippets",
        "follow_snippet",
    }
    # Files have no output schema: their result has no structuredContent.
    for name in names - {"list_snippets", "get_snippet", "events_snippet", "follow_snippet"}:
        tool = endpoint.tools.get(name)
        assert tool is not None and tool.output_schema is None, name
    [warning] = [m for m in endpoint.check() if m.id == "mcp_endpoint.W032"]
    assert "SnippetFiles.events is left out" in warning.msg
    assert "text/event-stream" in warning.msg
    assert warning.hint
    assert [m for m in endpoint.check() if m.is_serious()] == []


def test_an_event_stream_is_not_a_tool(client: Client, owner: Any, snippet: Snippet) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    listed = {t["name"] for t in rpc.result("tools/list")["tools"]}
    assert "events_snippet" not in listed
    assert "printable_snippet" in listed
    result = rpc.call("events_snippet", {"id": snippet.pk})
    assert result["structuredContent"]["error"]["code"] == "unavailable"
    assert "text/event-stream" in result["structuredContent"]["error"]["message"]


def test_text_that_does_not_decode_comes_as_bytes(client: Client, owner: Any) -> None:
    """A text file whose bytes are not in its declared charset is passed on as it is."""
    Snippet.objects.create(title="menu", code="x", owner=owner)
    credential = CREDENTIAL_KINDS["key_read"](owner)
    _, _, body = rest_bytes(client, credential, "/snippets/legacy_export/")
    result = MCPClient(client, "/mcp", credential.bearer).call("legacy_export_snippets")
    resource = result["content"][1]["resource"]
    assert resource["mimeType"] == "text/csv"
    assert "text" not in resource
    assert base64.b64decode(resource["blob"]) == body


def test_a_view_that_answers_with_an_event_stream_is_an_internal_error(
    client: Client, owner: Any, snippet: Snippet
) -> None:
    rpc = MCPClient(client, "/mcp", CREDENTIAL_KINDS["key_read"](owner).bearer)
    result = rpc.call("follow_snippet", {"id": snippet.pk})
    assert result["isError"] is True
    error = result["structuredContent"]["error"]
    assert error["code"] == "internal_error"
    assert "text/event-stream" in error["message"]
