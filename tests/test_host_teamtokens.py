"""The host whose team tokens authenticate as ``AnonymousUser`` (:mod:`tests.hosts.teamtokens`).

A class in the endpoint's ``AUTHENTICATION_CLASSES`` that accepts the request names the
caller, as for REST, even when the user it answers is anonymous and the token in
``request.auth`` is all there is: ``tools/list`` shows the view's tools (such a credential
holds no scopes of ours, so the view's own permissions decide each call, as on REST), the
calls answer as REST does, and an unknown token is a 401 at both doors.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client, RequestFactory
from django.urls import path

from mcp_endpoint import authentication
from mcp_endpoint.models import ToolCall
from mcp_endpoint.mrtr import principal
from mcp_endpoint.protocol.request_context import RequestContext
from tests.hosts import host_endpoint
from tests.hosts.parity import (
    Credential,
    CredentialClient,
    Operation,
    call_rest,
    check_each,
    check_refused_as_no_credential,
)
from tests.hosts.teamtokens.authentication import TeamTokenAuthentication
from tests.hosts.teamtokens.models import Note, Team, TeamToken

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.teamtokens.urls")]

TOOLS = ["list_notes", "get_note", "create_note", "update_note", "replace_note", "delete_note"]


def team_token(key: str) -> Credential:
    return Credential(key, frozenset(), scheme="Team")


def snapshot() -> list[tuple[Any, ...]]:
    return list(Note.objects.order_by("pk").values_list("pk", "team_id", "title", "body"))


@pytest.fixture
def notes() -> dict[str, int]:
    """Two teams, red's tokens (``red-read``, ``red-write``) and a note of each team."""
    red, blue = Team.objects.create(name="red"), Team.objects.create(name="blue")
    TeamToken.objects.create(team=red, key="red-read")
    TeamToken.objects.create(team=red, key="red-write", can_write=True)
    TeamToken.objects.create(team=blue, key="blue-write", can_write=True)
    mine = Note.objects.create(team=red, title="plan", body="ship it")
    Note.objects.create(team=red, title="retro")
    theirs = Note.objects.create(team=blue, title="secret")
    return {"mine": mine.pk, "theirs": theirs.pk}


def operations(ids: dict[str, int]) -> list[Operation]:
    mine, theirs = ids["mine"], ids["theirs"]
    return [
        ("list_notes", "GET", "/notes/", {}),
        ("get_note", "GET", f"/notes/{mine}/", {"id": mine}),
        ("get_note", "GET", f"/notes/{theirs}/", {"id": theirs}),
        ("create_note", "POST", "/notes/", {"title": "new", "body": "b"}),
        ("create_note", "POST", "/notes/", {"body": "no title"}),
        ("update_note", "PATCH", f"/notes/{mine}/", {"id": mine, "title": "renamed"}),
        ("update_note", "PATCH", f"/notes/{theirs}/", {"id": theirs, "title": "ours now"}),
        ("replace_note", "PUT", f"/notes/{mine}/", {"id": mine, "title": "t", "body": "c"}),
        ("delete_note", "DELETE", f"/notes/{mine}/", {"id": mine}),
        ("delete_note", "DELETE", f"/notes/{theirs}/", {"id": theirs}),
    ]


@pytest.mark.parametrize(
    ("key", "statuses"),
    [
        ("red-read", [200, 200, 404, 403, 403, 403, 403, 403, 403, 403]),
        ("red-write", [200, 200, 404, 201, 400, 200, 404, 200, 204, 404]),
    ],
)
def test_rest_and_mcp_agree_for_each_token(
    key: str, statuses: list[int], client: Client, notes: dict[str, int]
) -> None:
    outcomes = check_each(client, team_token(key), operations(notes), snapshot=snapshot)
    assert [rest.status_code for rest, _ in outcomes] == statuses
    # The team's own notes only, on both sides.
    listed = outcomes[0][1]["structuredContent"]["results"]
    assert [n["title"] for n in listed] == ["plan", "retro"]


@pytest.mark.parametrize("key", ["red-read", "red-write"])
def test_tools_list_shows_the_tools_and_the_views_permissions_decide(
    key: str, client: Client, notes: dict[str, int]
) -> None:
    # A team token holds no scopes of ours: nothing is hidden for scopes, and a read-only
    # token's write is refused by the view's permission, as on REST (403 there).
    listed = CredentialClient(client, "/mcp", team_token(key)).result("tools/list")["tools"]
    assert set(TOOLS) <= {t["name"] for t in listed}


@pytest.mark.parametrize("key", ["nope", "red-read extra"])
def test_an_unknown_team_token_is_401_at_both_doors(
    key: str, client: Client, notes: dict[str, int]
) -> None:
    credential = team_token(key)
    assert call_rest(client, credential, "GET", "/notes/", {}).status_code == 401
    challenge = check_refused_as_no_credential(client, credential, "/mcp")
    assert 'error="invalid_token"' in challenge


def test_the_call_log_names_the_class_and_no_user(client: Client, notes: dict[str, int]) -> None:
    answer = CredentialClient(client, "/mcp", team_token("red-read")).call("list_notes", {})
    assert answer["isError"] is False
    [row] = ToolCall.objects.filter(tool="list_notes")
    assert row.user_id is None
    assert row.credential == "TeamTokenAuthentication"
    assert row.outcome == "ok"


def test_drf_throttles_count_the_call_under_the_key_rest_uses(
    client: Client, notes: dict[str, int]
) -> None:
    # DRF keys an anonymous user by address, whatever its auth: AnonRateThrottle and
    # UserRateThrottle alike. A tool call counts under the same keys as a REST request
    # (the user key, here, by the endpoint's throttle at the transport, which the view's
    # throttle of the same key then leaves alone), never under a user id it has not.
    cache.clear()
    credential = team_token("red-read")
    assert call_rest(client, credential, "GET", "/notes/", {}).status_code == 200
    assert CredentialClient(client, "/mcp", credential).call("list_notes", {})["isError"] is False
    assert len(cache.get("throttle_anon_127.0.0.1")) == 2
    assert cache.get("throttle_user_127.0.0.1") is not None
    assert cache.get("throttle_user_None") is None


def test_each_token_is_a_credential_of_its_own(notes: dict[str, int]) -> None:
    # Per-credential limits (the protocol rate, open streams) count each token apart, and
    # the credential is named without its secret.
    def credential(key: str) -> authentication.Credential:
        request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Team {key}")
        found = authentication.authenticate(
            authentication.drf_request(request, [TeamTokenAuthentication])
        )
        assert found is not None and found.anonymous
        return found

    read, write = credential("red-read"), credential("red-write")
    assert read.ident() != write.ident()
    assert read.ident() == credential("red-read").ident()
    assert "red-read" not in read.ident() and "red-read" not in read.label()
    assert authentication.same_caller(read, credential("red-read"))
    assert not authentication.same_caller(read, write)
    # An auth that is no row (the token string itself) is named by a digest.
    first, second = (
        authentication.Credential(user=read.user, auth=raw, scopes=None)
        for raw in ("team-secret-1", "team-secret-2")
    )
    assert first.ident() != second.ident() and "secret" not in first.ident()
    # Sessions, streams and tasks belong to the token, not to "anonymous".
    owners = {principal(RequestContext(credential=c)) for c in (read, write, first, second)}
    assert len(owners) == 4


def test_the_key_cache_leaves_team_tokens_alone(
    client: Client, notes: dict[str, int], settings: Any
) -> None:
    settings.MCP_ENDPOINT = {**getattr(settings, "MCP_ENDPOINT", {}), "API_KEY_CACHE_SECONDS": 60}
    for _ in range(2):
        answer = CredentialClient(client, "/mcp", team_token("red-write")).call("list_notes", {})
        assert answer["isError"] is False


# -- long-running tools and a credential whose user is anonymous ----------------------------------

TASK_TOOLS = host_endpoint(
    "teamtokens-tasks",
    AUTHENTICATION_CLASSES=["tests.hosts.teamtokens.authentication.TeamTokenAuthentication"],
)
TASK_TOOLS.tool(name="slow_report", task_support="optional")(lambda: "report ready")
TASK_TOOLS.tool(name="batch_job", task_support="required")(lambda: "job done")
urlpatterns = [path("mcp-tasks", TASK_TOOLS.urls)]


@pytest.mark.urls(__name__)
def test_a_team_token_runs_an_optional_task_tool_now_and_is_told_about_a_required_one(
    client: Client, notes: dict[str, int]
) -> None:
    """A task's worker looks its credential up again by its user; a team token has none,
    so an optional task tool answers at once and a task-only tool is refused before any
    task is made, saying why (never a task that fails in the worker)."""
    from mcp_endpoint.models import ToolTask
    from tests.test_tasks import TASKS, TaskClient

    tasks = TaskClient(CredentialClient(client, "/mcp-tasks", team_token("red-write")))
    now = tasks.call("slow_report", {})
    assert now["resultType"] == "complete" and "taskId" not in now
    assert now["content"][0]["text"] == "report ready"
    refused = tasks.call("batch_job", {}, caps=TASKS)
    assert refused["isError"] is True
    error = refused["structuredContent"]["error"]
    assert error["code"] == "task_unavailable" and "anonymous" in error["message"]
    assert not ToolTask.objects.exists()
