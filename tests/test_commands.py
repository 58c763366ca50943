"""The ``mcp_key`` and ``mcp_tools`` management commands."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from mcp_endpoint import site
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.models import APIKey, digest_of
from tests.conftest import MCPClient, make_key

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


def lines(output: str) -> list[str]:
    return output.rstrip("\n").split("\n")


# -- mcp_key create -------------------------------------------------------------------


def test_create_prints_a_working_key_last(
    alice: Any, mcp_client: Callable[..., MCPClient], client: Client
) -> None:
    output = run("mcp_key", "create", "--user", "alice", "--scopes", "read write", "--name", "ci")
    raw = lines(output)[-1]
    key = APIKey.objects.get()
    assert raw.startswith(f"{key.prefix}_")
    assert key.digest == digest_of(raw)
    assert key.user == alice
    assert key.name == "ci"
    assert key.scopes == {"read", "write"}
    assert key.expires is None
    assert key.prefix in lines(output)[0]
    assert raw not in "\n".join(lines(output)[:-1])

    assert mcp_client(raw).post(PING).status_code == 200
    response = client.get("/api/tasks/", headers={"Authorization": f"Bearer {raw}"})
    assert response.status_code == 200


def test_create_for_an_inactive_user_warns(alice: Any) -> None:
    alice.is_active = False
    alice.save()
    out, err = io.StringIO(), io.StringIO()
    call_command("mcp_key", "create", "--user", "alice", "--scopes", "read", stdout=out, stderr=err)
    assert "alice is inactive" in err.getvalue()
    assert lines(out.getvalue())[-1].startswith(APIKey.objects.get().prefix)


def test_create_with_expiry(alice: Any) -> None:
    before = timezone.now()
    run("mcp_key", "create", "--user", "alice", "--scopes", "read", "--expires-days", "30")
    key = APIKey.objects.get()
    assert key.expires is not None
    assert before + timedelta(days=30) <= key.expires <= timezone.now() + timedelta(days=30)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--user", "nobody", "--scopes", "read"], "No user is named 'nobody'"),
        (["--user", "alice", "--scopes", "read admin"], "Unknown scope(s): admin"),
        (["--user", "alice", "--scopes", " "], "at least one scope"),
        (["--user", "alice", "--scopes", "read", "--expires-days", "0"], "positive"),
        (["--user", "alice"], "--scopes"),
    ],
)
def test_create_refuses(alice: Any, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=re.escape(message)):
        run("mcp_key", "create", *args)
    assert not APIKey.objects.exists()


def test_unknown_action(db: Any) -> None:
    with pytest.raises(CommandError, match="invalid choice"):
        run("mcp_key", "rotate")


# -- mcp_key list ---------------------------------------------------------------------


def test_list(alice: Any, bob: Any) -> None:
    raw_a = make_key(alice, "read", name="alice ro")
    raw_b = make_key(bob, "read write", expires=timezone.now() - timedelta(days=1))
    revoked, raw_c = APIKey.objects.create_key(user=bob, scopes="read", name="old")
    revoked.revoke()
    APIKey.objects.filter(name="alice ro").update(last_used=timezone.now())

    output = run("mcp_key", "list")
    rows = lines(output)
    assert rows[0].split() == [
        "prefix",
        "name",
        "user",
        "scopes",
        "created",
        "expires",
        "last",
        "used",
        "status",
    ]
    assert len(rows) == 4
    by_prefix = {row.split()[0]: row for row in rows[1:]}
    for key in APIKey.objects.all():
        assert key.digest not in output
        row = by_prefix[key.prefix]
        assert key.user.get_username() in row
        assert row.endswith({"alice ro": "active", "old": "revoked", "": "expired"}[key.name])
    assert "read write" in output
    for raw in [raw_a, raw_b, raw_c]:
        assert raw not in output
        assert raw.rsplit("_", 1)[1] not in output

    only_bob = lines(run("mcp_key", "list", "--user", "bob"))
    assert len(only_bob) == 3
    assert all("alice" not in row for row in only_bob)


def test_list_empty_and_unknown_user(alice: Any) -> None:
    assert run("mcp_key", "list").strip() == "No API keys."
    with pytest.raises(CommandError, match="No user is named 'nobody'"):
        run("mcp_key", "list", "--user", "nobody")


# -- mcp_key revoke -------------------------------------------------------------------


def test_revoke(alice: Any, mcp_client: Callable[..., MCPClient]) -> None:
    key, raw = APIKey.objects.create_key(user=alice, scopes="read")
    assert mcp_client(raw).post(PING).status_code == 200

    output = run("mcp_key", "revoke", key.prefix)
    assert f"Revoked API key {key.prefix}" in output
    key.refresh_from_db()
    assert key.is_revoked()
    assert mcp_client(raw).post(PING).status_code == 401
    assert lines(run("mcp_key", "list"))[1].endswith("revoked")

    # Again: nothing changes.
    when = key.revoked
    assert "already revoked" in run("mcp_key", "revoke", key.prefix)
    key.refresh_from_db()
    assert key.revoked == when


def test_revoke_unknown_prefix(alice: Any) -> None:
    make_key(alice)
    with pytest.raises(CommandError, match="No API key has the prefix 'mcp_00000000'"):
        run("mcp_key", "revoke", "mcp_00000000")
    assert not APIKey.objects.filter(revoked__isnull=False).exists()


# -- mcp_tools ------------------------------------------------------------------------


@pytest.fixture
def fixture_endpoint() -> Iterator[Endpoint]:
    endpoint = Endpoint("commands-test")

    @endpoint.tool(scopes=["read"], annotations={"readOnlyHint": True, "openWorldHint": False})
    def look(topic: str) -> str:
        """Look at something.

        A second paragraph that the listing leaves out.
        """
        return topic

    @endpoint.tool(scopes=["write"], annotations={"destructiveHint": True})
    def erase(topic: str) -> str:
        """Erase something."""
        return topic

    @endpoint.tool
    def hello() -> str:
        """Say hello."""
        return "hello"

    yield endpoint
    endpoints.discard(endpoint)


def tool_rows(output: str) -> dict[str, str]:
    return {row.split()[0]: row for row in lines(output)[1:]}


def test_tools_for_read_and_for_read_write(fixture_endpoint: Endpoint, alice: Any) -> None:
    read = run("mcp_tools", "--endpoint", "commands-test", "--user", "alice", "--scopes", "read")
    assert lines(read)[0] == "2 tool(s) on endpoint 'commands-test' for alice with scopes read:"
    rows = tool_rows(read)
    assert set(rows) == {"look", "hello"}
    assert rows["look"].split(None, 1)[1].startswith("[read-only, closed-world, idempotent]  read")
    assert rows["look"].endswith("Look at something.")
    assert "second paragraph" not in read
    # A tool that states no hints is listed with the protocol's defaults, stated.
    assert "[destructive, open-world]" in rows["hello"]

    both = run("mcp_tools", "--endpoint", "commands-test", "--scopes", "read write")
    rows = tool_rows(both)
    assert set(rows) == {"look", "erase", "hello"}
    assert "[destructive, open-world]" in rows["erase"]
    assert rows["erase"].endswith("Erase something.")
    assert "for anyone with scopes read write" in lines(both)[0]

    none = run("mcp_tools", "--endpoint", "commands-test", "--scopes", "")
    assert set(tool_rows(none)) == {"hello"}
    everything = run("mcp_tools", "--endpoint", "commands-test")
    assert set(tool_rows(everything)) == {"look", "erase", "hello"}


def test_tools_on_the_default_endpoint(alice: Any) -> None:
    for scopes in ["read", "read write"]:
        held = set(scopes.split())
        output = run("mcp_tools", "--user", "alice", "--scopes", scopes)
        assert f"on endpoint {site.name!r} for alice" in lines(output)[0]
        expected = {tool.name for tool in site.tools if tool.required_scopes <= held}
        assert set(tool_rows(output)) == expected
    assert "summarize_project" in tool_rows(run("mcp_tools", "--scopes", "read"))


def test_tools_finds_endpoints_made_in_url_modules(db: Any) -> None:
    output = run("mcp_tools", "--endpoint", "conformance")
    assert "on endpoint 'conformance'" in lines(output)[0]
    assert "test_simple_text" in tool_rows(output)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--endpoint", "nope"], "No endpoint is named 'nope'"),
        (["--user", "nobody"], "No user is named 'nobody'"),
        (["--scopes", "read sudo"], r"Unknown scope\(s\): sudo"),
    ],
)
def test_tools_refuses(db: Any, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        run("mcp_tools", *args)
