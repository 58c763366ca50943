"""Skills (the skills extension) through the real URL: the conformance fixture's folder skill
at ``/conformance/mcp``, the demo's product skill at ``/mcp``, and the checks of a skill.

The conformance suite's own skills scenarios run in ``tests/test_conformance.py``.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.skills import (
    DIRECTORY,
    DirectorySkill,
    SkillError,
    StaticSkill,
    parse_frontmatter,
)
from project.tracker.models import Project
from tests.conftest import MCPClient
from tests.test_modern import FIXTURE, Modern, error_of, result_of

pytestmark = pytest.mark.django_db

EXTENSION = "io.modelcontextprotocol/skills"
FIXTURE_SKILL = "skill://fixture-conventions/SKILL.md"
PRODUCT_SKILL = "skill://task-tracker/SKILL.md"


def digest(content: bytes) -> str:
    return "sha256:" + hashlib.sha256(content).hexdigest()


def read_bytes(contents: dict[str, Any]) -> bytes:
    if "blob" in contents:
        return base64.b64decode(contents["blob"])
    text: str = contents["text"]
    return text.encode()


@pytest.fixture
def fixture_modern(mcp_client: Callable[..., MCPClient]) -> Modern:
    return Modern(mcp_client(None, FIXTURE))


@pytest.fixture
def modern(mcp_client: Callable[..., MCPClient], alice_key: str, project: Project) -> Modern:
    return Modern(mcp_client(alice_key))


# -- declaring the extension -------------------------------------------------------------


def test_discover_declares_the_extension_with_directory_reads(fixture_modern: Modern) -> None:
    capabilities = result_of(fixture_modern.post("server/discover"))["capabilities"]
    assert capabilities["extensions"][EXTENSION] == {"directoryRead": True}
    assert "resources" in capabilities


def test_initialize_declares_it_too(mcp_client: Callable[..., MCPClient]) -> None:
    rpc = mcp_client(None, FIXTURE)
    params = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t"}}
    assert EXTENSION in rpc.result("initialize", params)["capabilities"]["extensions"]


def test_an_endpoint_without_skills_declares_nothing_and_knows_no_skill_methods() -> None:
    from mcp_endpoint.protocol.request_context import LEGACY, RequestContext

    bare = Endpoint("bare-skills-test")
    assert "extensions" not in bare.features.capabilities()
    for method in ("skills/list", "skills/get", "resources/directory/read"):
        answer = bare.handle(
            {"jsonrpc": "2.0", "id": 1, "method": method, "params": {"uri": "skill://x/SKILL.md"}},
            RequestContext(era=LEGACY),
        )
        assert answer is not None and answer["error"]["code"] == jsonrpc.METHOD_NOT_FOUND


# -- skills/list and skills/get --------------------------------------------------------------


def test_the_listing_is_a_complete_manifest_with_true_digests(fixture_modern: Modern) -> None:
    result = result_of(fixture_modern.post("skills/list"))
    assert result["resultType"] == "complete"
    assert {"ttlMs", "cacheScope"} <= set(result)
    (entry,) = result["skills"]
    assert entry["uri"] == FIXTURE_SKILL
    assert entry["frontmatter"]["name"] == "fixture-conventions"
    assert entry["frontmatter"]["metadata"] == {"version": "1.0"}
    listed = {r["uri"]: r for r in entry["resources"]}
    assert set(listed) == {FIXTURE_SKILL, "skill://fixture-conventions/references/RESOURCES.md"}
    for uri, resource in listed.items():
        contents = result_of(fixture_modern.post("resources/read", {"uri": uri}))["contents"][0]
        body = read_bytes(contents)
        assert resource["digest"] == digest(body)
        assert resource["size"] == len(body)
    # The entry's frontmatter is the file's, field for field.
    skill_md = result_of(fixture_modern.post("resources/read", {"uri": FIXTURE_SKILL}))
    assert skill_md["contents"][0]["mimeType"] == "text/markdown"
    head = skill_md["contents"][0]["text"].split("---\n")[1]
    assert yaml.safe_load(head) == entry["frontmatter"]


def test_get_answers_for_a_skill_and_refuses_an_unknown_uri(fixture_modern: Modern) -> None:
    listed = result_of(fixture_modern.post("skills/list"))["skills"][0]
    got = result_of(fixture_modern.post("skills/get", {"uri": FIXTURE_SKILL}))
    assert got["skill"] == listed
    assert "nextCursor" not in got
    assert {"ttlMs", "cacheScope"} <= set(got)
    for uri in ("skill://nothing-here/SKILL.md", "skill://fixture-conventions", "test://static"):
        response = fixture_modern.post("skills/get", {"uri": uri})
        assert error_of(response, 400, jsonrpc.INVALID_PARAMS, fixture_modern.next_id)


def test_skill_md_is_listed_with_its_frontmatter_name_and_description(
    fixture_modern: Modern,
) -> None:
    resources = result_of(fixture_modern.post("resources/list"))["resources"]
    skill_md = next(r for r in resources if r["uri"] == FIXTURE_SKILL)
    assert skill_md["name"] == "fixture-conventions"
    assert skill_md["description"].startswith("How the conformance fixture")
    assert skill_md["mimeType"] == "text/markdown"


def test_a_file_the_skill_does_not_have_is_not_found(fixture_modern: Modern) -> None:
    response = fixture_modern.post(
        "resources/read", {"uri": "skill://fixture-conventions/references/NOPE.md"}
    )
    error_of(response, 400, jsonrpc.INVALID_PARAMS, fixture_modern.next_id)


# -- resources/directory/read ----------------------------------------------------------------


def test_directories_list_their_direct_children(fixture_modern: Modern) -> None:
    root = result_of(
        fixture_modern.post("resources/directory/read", {"uri": "skill://fixture-conventions"})
    )
    children = {r["uri"]: r["mimeType"] for r in root["resources"]}
    assert children == {
        "skill://fixture-conventions/SKILL.md": "text/markdown",
        "skill://fixture-conventions/references": DIRECTORY,
    }
    below = result_of(
        fixture_modern.post(
            "resources/directory/read", {"uri": "skill://fixture-conventions/references"}
        )
    )
    assert [r["name"] for r in below["resources"]] == ["RESOURCES.md"]


@pytest.mark.parametrize(
    "uri", [FIXTURE_SKILL, "skill://fixture-conventions/nope", "skill://other", "test://static"]
)
def test_a_directory_read_of_anything_else_is_invalid_params(
    fixture_modern: Modern, uri: str
) -> None:
    response = fixture_modern.post("resources/directory/read", {"uri": uri})
    error = error_of(response, 400, jsonrpc.INVALID_PARAMS, fixture_modern.next_id)
    assert uri in error["message"]


# -- the demo's product skill ----------------------------------------------------------------


def test_the_product_skill_maps_the_viewsets_and_their_relations(modern: Modern) -> None:
    entry = result_of(modern.post("skills/get", {"uri": PRODUCT_SKILL}))["skill"]
    assert entry["frontmatter"]["name"] == "task-tracker"
    uris = {r["uri"] for r in entry["resources"]}
    assert uris == {
        PRODUCT_SKILL,
        "skill://task-tracker/references/projects.md",
        "skill://task-tracker/references/tasks.md",
        "skill://task-tracker/references/comments.md",
    }
    text = result_of(modern.post("resources/read", {"uri": PRODUCT_SKILL}))["contents"][0]["text"]
    # Built from the registrations: the tools by name, the relations from the models'
    # foreign keys that the serializers show.
    for tool in ("list_tasks", "complete_task", "get_project", "create_comment"):
        assert f"`{tool}`" in text
    assert "A task belongs to a project: `project` is its id; read it with `get_project`." in text
    assert "A comment belongs to a task: `task` is its id; read it with `get_task`." in text
    # The host's own rules close it.
    assert "Priority 1 is the most urgent" in text
    tasks = result_of(
        modern.post("resources/read", {"uri": "skill://task-tracker/references/tasks.md"})
    )["contents"][0]["text"]
    assert "| `status` | one of `open`, `in_progress`, `done` |" in tasks
    assert "`due_before`" in tasks  # the list tool's filters, from its input schema


def test_a_skill_with_scopes_is_hidden_from_a_credential_without_them(
    mcp_client: Callable[..., MCPClient], alice_read_key: str, alice_key: str
) -> None:
    from mcp_endpoint import site

    hidden = StaticSkill(
        "admin-runbook",
        "---\nname: admin-runbook\ndescription: Only for writers.\n---\n\nBody.\n",
        scopes=["write"],
    )
    site.add_skill(hidden)
    try:
        reader = Modern(mcp_client(alice_read_key))
        writer = Modern(mcp_client(alice_key))
        uri = "skill://admin-runbook/SKILL.md"
        assert uri not in {s["uri"] for s in result_of(reader.post("skills/list"))["skills"]}
        for method in ("skills/get", "resources/read"):
            response = reader.post(method, {"uri": uri})
            error_of(response, 400, jsonrpc.INVALID_PARAMS, reader.next_id)
        assert uri in {s["uri"] for s in result_of(writer.post("skills/list"))["skills"]}
    finally:
        site.skills._skills.pop(hidden.path)


# -- the format and the checks ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("# no frontmatter\n", "does not start with"),
        ("---\nname: x\n---\n", "no description"),
        ("---\n- a list\n---\n", "not a mapping"),
        ("---\nname: [unclosed\n---\n", "not YAML"),
    ],
)
def test_frontmatter_that_breaks_the_format(text: str, problem: str) -> None:
    with pytest.raises(SkillError, match=problem):
        parse_frontmatter(text)


def test_a_date_in_the_frontmatter_is_its_iso_text() -> None:
    parsed = parse_frontmatter(
        "---\nname: a\ndescription: b\nmetadata:\n  since: 2026-01-02\n---\n"
    )
    assert parsed["metadata"] == {"since": "2026-01-02"}


def check_ids(endpoint: Endpoint) -> list[str]:
    return [m.id or "" for m in endpoint.check(database=True)]


def test_e140_two_skills_at_one_path() -> None:
    endpoint = Endpoint("skills-e140")
    body = "---\nname: twice\ndescription: d\n---\n"
    endpoint.add_skill(StaticSkill("twice", body))
    endpoint.add_skill(StaticSkill("twice", body))
    assert check_ids(endpoint) == ["mcp_endpoint.E140"]


@pytest.mark.parametrize(
    ("path", "text", "problem"),
    [
        ("Bad_Name", "---\nname: Bad_Name\ndescription: d\n---\n", "naming rules"),
        ("one", "---\nname: other\ndescription: d\n---\n", "must be equal"),
        ("bare", "no frontmatter\n", "does not start with"),
        (
            "reserved",
            "---\nname: reserved\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: 1\n---\n",
            "reserved keys",
        ),
    ],
)
def test_e141_a_skill_that_breaks_the_format(path: str, text: str, problem: str) -> None:
    endpoint = Endpoint(f"skills-e141-{path.lower()}")
    endpoint.add_skill(StaticSkill(path, text))
    (message,) = endpoint.check(database=True)
    assert message.id == "mcp_endpoint.E141"
    assert problem in message.msg


def test_e141_a_folder_without_skill_md(tmp_path: Path) -> None:
    endpoint = Endpoint("skills-e141-folder")
    endpoint.skill_directory(tmp_path)
    assert check_ids(endpoint) == ["mcp_endpoint.E141"]


def test_a_folder_skill_leaves_hidden_files_out(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: folder\ndescription: d\n---\n")
    (tmp_path / ".secret").write_text("x")
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.py").write_text("print(1)\n")
    skill = DirectorySkill(tmp_path, path="team/folder")
    assert set(skill.files()) == {"SKILL.md", "scripts/run.py"}
    assert skill.uri == "skill://team/folder/SKILL.md"
    assert skill.problems() == []


def test_the_demo_skills_pass_the_checks() -> None:
    from mcp_endpoint import site
    from project.conformance import fixture

    assert [m for m in site.skills.check(database=True)] == []
    assert [m for m in fixture.skills.check(database=True)] == []
