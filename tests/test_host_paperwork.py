"""The document host (:mod:`tests.hosts.paperwork`): a tool's structured result is the JSON
the same REST request returns, parsed from the same renderer's bytes (sets, datetimes,
decimals, UUIDs, a camelCase renderer, fields a serializer drops); output schemas every
result satisfies; ``__in`` filters sent comma-separated; one tool per method of a
multi-method action; result text that names items by their kind."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, override_settings
from jsonschema import Draft202012Validator

from tests.hosts.paperwork.models import ApplicationSettings, Correspondent, Document, Note, Tag
from tests.hosts.parity import (
    CREDENTIAL_KINDS,
    Credential,
    CredentialClient,
    api_key,
    call_rest,
    check_parity,
)

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.paperwork.urls")]

User = get_user_model()


@pytest.fixture
def owner() -> Any:
    return User.objects.create_user("pia", "pia@example.com", "pw-pia-123")


@pytest.fixture
def data(owner: Any) -> dict[str, Any]:
    """Six documents over three correspondents, a tag, two notes on the last document."""
    correspondents = [Correspondent.objects.create(name=f"Sender {i}") for i in range(3)]
    inbox = Tag.objects.create(name="inbox")
    when = datetime.datetime(2026, 11, 3, 9, 30, 15, 250000, tzinfo=datetime.timezone.utc)
    documents = []
    for i in range(6):
        document = Document.objects.create(
            title=f"Invoice {i}",
            content=f"Pay {i}0 euros.",
            amount=None if i == 0 else f"{i}2.50",
            created=when + datetime.timedelta(days=i),
            correspondent=correspondents[i % 3],
            owner=owner,
        )
        document.tags.add(inbox)
        documents.append(document)
    Note.objects.create(document=documents[-1], note="Paid.")
    Note.objects.create(document=documents[-1], note="Filed.")
    ApplicationSettings.objects.create(app_title="Paperwork")
    return {
        "correspondents": [c.pk for c in correspondents],
        "tag": inbox.pk,
        "documents": [d.pk for d in documents],
        "note": documents[-1].notes.first().pk,  # type: ignore[union-attr]
    }


def snapshot() -> Any:
    return (
        sorted(Document.objects.values_list("id", "title")),
        sorted(Note.objects.values_list("id", "note")),
        sorted(Tag.objects.values_list("id", "name", "colour")),
    )


def read_operations(data: dict[str, Any]) -> list[tuple[str, str, dict[str, Any], Any]]:
    """(tool, REST URL, the tool's arguments, the REST query) for every read tool."""
    doc, tag = data["documents"][-1], data["tag"]
    first, _, third = data["correspondents"]
    return [
        ("list_documents", "/api/documents/", {}, {}),
        ("list_documents", "/api/documents/", {"full_content": True}, {"full_content": "true"}),
        (
            "list_documents",
            "/api/documents/",
            {"correspondent__id__in": [first, third]},
            {"correspondent__id__in": f"{first},{third}"},
        ),
        (
            "list_documents",
            "/api/documents/",
            {"id__in": data["documents"][:2], "page_size": 1},
            {"id__in": ",".join(map(str, data["documents"][:2])), "page_size": 1},
        ),
        ("get_document", f"/api/documents/{doc}/", {"id": doc}, {}),
        ("get_document_notes", f"/api/documents/{doc}/notes/", {"id": doc}, {}),
        ("statistics_documents", "/api/documents/statistics/", {}, {}),
        ("list_tags", "/api/tags/", {}, {}),
        ("list_tags", "/api/tags/", {"full_perms": True}, {"full_perms": "true"}),
        ("get_tag", f"/api/tags/{tag}/", {"id": tag, "full_perms": True}, {"full_perms": "true"}),
        ("list_correspondents", "/api/correspondents/", {}, {}),
        ("list_application_settings", "/api/settings/", {}, {}),
    ]


def rest_json(client: Client, credential: Credential, url: str, query: Any) -> Any:
    response = client.get(
        url, query, headers={**credential.headers(), "Accept": "application/json"}
    )
    assert response.status_code == 200, response.content
    return json.loads(response.content)


@pytest.mark.parametrize("index", range(12))
def test_a_read_result_is_the_rest_json_exactly(
    index: int, client: Client, owner: Any, data: dict[str, Any]
) -> None:
    tool, url, arguments, query = read_operations(data)[index]
    credential = api_key(owner, "read")
    expected = rest_json(client, credential, url, query)
    answer = CredentialClient(client, "/mcp", credential).call(tool, arguments)
    assert answer["isError"] is False, answer
    structured = answer["structuredContent"]
    assert (structured["results"] if isinstance(expected, list) else structured) == expected


def test_sets_datetimes_decimals_and_uuids_as_rest_writes_them(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    tag = rpc.call("get_tag", {"id": data["tag"], "full_perms": True})["structuredContent"]
    assert isinstance(tag["permissions"], list)
    assert set(tag["permissions"]) == {
        "paperwork.change_tag",
        "paperwork.view_tag",
        f"paperwork.tag_{data['tag']}",
    }
    document = rpc.call("get_document", {"id": data["documents"][-1]})["structuredContent"]
    assert document["created"] == "2026-11-08T09:30:15.250000Z"
    assert document["last_note_at"].endswith("Z")
    assert document["amount"] == "52.50"  # a DecimalField: a string, COERCE_DECIMAL_TO_STRING
    assert document["amount_with_tax"] == 63.0  # a bare Decimal: DRF's encoder writes a float
    assert document["archive_id"] == document["uuid"]
    assert "content" not in document  # dropped unless full_content asks for it


@override_settings(REST_FRAMEWORK={"COERCE_DECIMAL_TO_STRING": False})
def test_decimals_follow_the_products_coerce_setting(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    credential = api_key(owner, "read")
    doc = data["documents"][-1]
    expected = rest_json(client, credential, f"/api/documents/{doc}/", {})
    assert expected["amount"] == 52.5
    answer = CredentialClient(client, "/mcp", credential).call("get_document", {"id": doc})
    assert answer["structuredContent"] == expected


def test_a_hosts_own_json_renderer_writes_the_result(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    answer = rpc.call("list_application_settings", {})
    assert answer["structuredContent"]["results"][0]["appTitle"] == "Paperwork"


def test_a_view_whose_default_renderer_is_csv_answers_the_tool_in_json(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    credential = api_key(owner, "read")
    browser_default = client.get("/api/correspondents/", headers=credential.headers())
    assert browser_default["Content-Type"].startswith("text/csv")
    answer = CredentialClient(client, "/mcp", credential).call("list_correspondents", {})
    assert answer["structuredContent"]["results"] == rest_json(
        client, credential, "/api/correspondents/", {}
    )


def test_a_csv_only_action_answers_with_the_rest_bytes_as_a_resource(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    credential = api_key(owner, "read")
    rest = client.get("/api/documents/export/", headers=credential.headers())
    rpc = CredentialClient(client, "/mcp", credential)
    tool = next(t for t in rpc.result("tools/list")["tools"] if t["name"] == "export_documents")
    assert "outputSchema" not in tool
    answer = rpc.call("export_documents", {})
    assert "structuredContent" not in answer
    resource = answer["content"][1]["resource"]
    assert resource["mimeType"] == "text/csv"
    assert resource["text"] == rest.content.decode()


def test_an_in_filter_is_sent_comma_separated(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    first, _, third = data["correspondents"]
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    answer = rpc.call("list_documents", {"correspondent__id__in": [first, third]})
    found = {d["correspondent"] for d in answer["structuredContent"]["results"]}
    assert answer["structuredContent"]["count"] == 4
    assert found == {first, third}


def tools(rpc: CredentialClient) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in rpc.result("tools/list")["tools"]}


def test_each_method_of_the_notes_action_is_a_tool_with_its_own_arguments(
    client: Client, owner: Any
) -> None:
    listed = tools(CredentialClient(client, "/mcp", api_key(owner, "read write")))
    assert "notes_document" not in listed
    read, add, delete = (
        listed[n] for n in ("get_document_notes", "add_document_note", "delete_document_note")
    )
    assert set(read["inputSchema"]["properties"]) == {"id"}
    assert set(add["inputSchema"]["properties"]) == {"id", "note"}
    assert add["inputSchema"]["required"] == ["id", "note"]
    # The note's ?id= beside the document's {id}: its argument says it goes in the query.
    assert set(delete["inputSchema"]["properties"]) == {"id", "query_id"}
    assert delete["inputSchema"]["properties"]["query_id"]["description"] == "The note."
    assert read["annotations"]["readOnlyHint"] is True
    assert add["annotations"]["readOnlyHint"] is False
    assert delete["annotations"]["destructiveHint"] is True
    assert add["annotations"]["title"] == "Add document note"


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_the_notes_tools_agree_with_rest(
    kind: str, client: Client, owner: Any, data: dict[str, Any]
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    doc = data["documents"][-1]
    url = f"/api/documents/{doc}/notes/"
    check_parity(
        client,
        credential,
        tool="get_document_notes",
        method="GET",
        url=url,
        arguments={"id": doc},
        rest_arguments={},
        snapshot=snapshot,
    )
    check_parity(
        client,
        credential,
        tool="add_document_note",
        method="POST",
        url=url,
        arguments={"id": doc, "note": "Checked."},
        rest_arguments={"note": "Checked."},
        snapshot=snapshot,
    )
    rest, answer = check_parity(
        client,
        credential,
        tool="delete_document_note",
        method="DELETE",
        url=f"{url}?id={data['note']}",
        arguments={"id": doc, "query_id": data["note"]},
        rest_arguments={},
        snapshot=snapshot,
    )
    if rest.status_code == 200:
        assert [n["note"] for n in answer["structuredContent"]["results"]] == ["Filed."]


@pytest.mark.parametrize("kind", sorted(CREDENTIAL_KINDS))
def test_document_and_tag_writes_agree_with_rest(
    kind: str, client: Client, owner: Any, data: dict[str, Any]
) -> None:
    credential = CREDENTIAL_KINDS[kind](owner)
    doc, tag = data["documents"][0], data["tag"]
    # The uuid said, or each side would draw its own.
    created = {
        "title": "Receipt",
        "created": "2026-11-20T10:00:00Z",
        "amount": "3.10",
        "uuid": "5f1c2b9e-8d1a-4c3e-9b7f-2a6d4e8c0f13",
    }
    for tool, method, url, arguments in [
        ("create_document", "POST", "/api/documents/", created),
        ("update_document", "PATCH", f"/api/documents/{doc}/", {"id": doc, "title": "Paid"}),
        ("email_document", "POST", f"/api/documents/{doc}/email_document/", {"id": doc}),
        ("delete_document", "DELETE", f"/api/documents/{doc}/", {"id": doc}),
        ("create_tag", "POST", "/api/tags/", {"name": "tax"}),
        ("update_tag", "PATCH", f"/api/tags/{tag}/", {"id": tag, "colour": "#000000"}),
        ("delete_tag", "DELETE", f"/api/tags/{tag}/", {"id": tag}),
    ]:
        check_parity(
            client,
            credential,
            tool=tool,
            method=method,
            url=url,
            arguments=arguments,
            rest_arguments={k: v for k, v in arguments.items() if k != "id"},
            snapshot=snapshot,
        )


def test_result_text_names_items_by_their_own_kind(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    text = rpc.call("get_document_notes", {"id": data["documents"][-1]})["content"][0]["text"]
    lines = text.splitlines()
    assert lines[0] == "2 notes."
    assert all(line.startswith("- Note ") for line in lines[1:]), text
    stats = rpc.call("statistics_documents", {})["content"][0]["text"]
    assert stats.startswith("statistics: documents_total=6")


def test_names_have_no_double_plural_and_no_repeated_noun(client: Client, owner: Any) -> None:
    listed = tools(CredentialClient(client, "/mcp", api_key(owner, "read write")))
    assert {"list_application_settings", "get_application_settings", "email_document"} <= set(
        listed
    )
    assert not [n for n in listed if "settingss" in n or "document_document" in n]


def requirements(schema: Any, path: str = "#") -> Iterator[str]:
    """Where ``schema`` requires something, but for the tool's own ``results`` wrapper."""
    if isinstance(schema, dict):
        required = schema.get("required")
        if isinstance(required, list) and required and required != ["results"]:
            yield f"{path}: {required}"
        for key, value in schema.items():
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    yield from requirements(sub, f"{path}/properties/{name}")
            elif isinstance(value, dict | list):
                yield from requirements(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            yield from requirements(sub, f"{path}/{i}")


def test_output_schemas_require_nothing_and_leave_method_fields_untyped(
    client: Client, owner: Any
) -> None:
    listed = tools(CredentialClient(client, "/mcp", api_key(owner, "read write")))
    for name, tool in listed.items():
        assert not list(requirements(tool.get("outputSchema"))), name
    document = listed["get_document"]["outputSchema"]["properties"]
    assert document["notes_count"] == {}  # its hint says str; the method returns a count
    assert document["title"]["type"] == "string"
    assert listed["list_documents"]["outputSchema"]["properties"]["results"]["type"] == "array"


def test_every_result_satisfies_its_output_schema(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    listed = tools(rpc)
    for tool, _, arguments, _ in read_operations(data):
        schema = listed[tool]["outputSchema"]
        structured = rpc.call(tool, arguments)["structuredContent"]
        errors = [e.message for e in Draft202012Validator(schema).iter_errors(structured)]
        assert not errors, (tool, arguments, errors)


def test_a_rest_call_with_a_list_in_the_query_gives_the_same_as_mcp(
    client: Client, owner: Any, data: dict[str, Any]
) -> None:
    """The repeated form REST also reads for a plain filter: ``correspondent`` is one value,
    and a list of one value is sent as it."""
    credential = api_key(owner, "read")
    first = data["correspondents"][0]
    rest = call_rest(client, credential, "GET", "/api/documents/", {"correspondent": first})
    answer = CredentialClient(client, "/mcp", credential).call(
        "list_documents", {"correspondent": first}
    )
    assert answer["structuredContent"] == rest.json()


def test_one_method_of_an_action_is_named_or_left_out_by_its_own_key(owner: Any) -> None:
    from tests.hosts import host_endpoint
    from tests.hosts.paperwork.views import DocumentViewSet

    endpoint = host_endpoint("paperwork-options")
    endpoint.register_viewset(
        DocumentViewSet,
        include=["notes"],
        names={"notes.post": "annotate_document"},
        exclude=["notes.delete"],
        annotations={"notes": {"openWorldHint": True}},
    )
    tools = {tool.name: tool for tool in endpoint.tools}
    assert set(tools) == {"get_document_notes", "annotate_document"}
    assert tools["annotate_document"].method == "POST"
    assert tools["annotate_document"].annotations["title"] == "Annotate document"
    assert all(t.annotations["openWorldHint"] is True for t in tools.values()), [
        t.annotations for t in tools.values()
    ]
    assert [m for m in endpoint.check() if m.id == "mcp_endpoint.E020"] == []


def test_a_renderer_that_writes_no_json_is_a_tool_error(
    client: Client, owner: Any, data: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host's JSON renderer whose bytes do not parse: a clear internal error, logged,
    never a result built from something else."""
    from tests.hosts.paperwork.views import CamelCaseJSONRenderer

    monkeypatch.setattr(CamelCaseJSONRenderer, "render", lambda self, *args, **kwargs: b"{oops")
    rpc = CredentialClient(client, "/mcp", api_key(owner, "read"))
    answer = rpc.call("list_application_settings", {})
    assert answer["isError"] is True
    assert answer["structuredContent"]["error"]["code"] == "internal_error"
