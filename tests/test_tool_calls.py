"""The admin's log of tool calls: one row per call, arguments redacted, read-only."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model

from mcp_endpoint.models import ToolCall, redact

pytestmark = pytest.mark.django_db


def test_a_call_leaves_a_row(mcp_client: Any, alice: Any, alice_key: str, project: Any) -> None:
    result = mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert result["isError"] is False
    row = ToolCall.objects.get()
    assert row.tool == "summarize_project"
    assert row.user == alice
    assert row.endpoint == "mcp"
    assert row.outcome == "ok"
    assert row.credential.startswith("api_key:mcp_")
    assert alice_key not in row.credential
    assert row.arguments == {"project_id": project.pk}
    assert row.duration_ms >= 0


def test_a_failed_call_records_its_error_code(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("get_task", {"id": 999_999})
    assert ToolCall.objects.get().outcome == "not_found"


def test_the_failed_write_is_rolled_back_but_its_log_row_stays(
    mcp_client: Any, alice_key: str, project: Any
) -> None:
    task = project.tasks.get(title="Ship it")
    result = mcp_client(alice_key).call("complete_task", {"id": task.pk})
    assert result["structuredContent"]["error"]["code"] == "conflict"
    assert ToolCall.objects.filter(tool="complete_task", outcome="conflict").exists()


def test_logging_can_be_turned_off(
    settings: Any, mcp_client: Any, alice_key: str, project: Any
) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "LOG_TOOL_CALLS": False}
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    assert not ToolCall.objects.exists()


def test_redaction_reaches_nested_values() -> None:
    arguments = {"title": "x", "api_token": "t0k", "nested": [{"Password": "pw", "ok": 1}]}
    assert redact(arguments, ["password", "secret", "token"]) == {
        "title": "x",
        "api_token": "[redacted]",
        "nested": [{"Password": "[redacted]", "ok": 1}],
    }


def test_the_admin_lists_calls_read_only(
    client: Any, mcp_client: Any, alice_key: str, project: Any
) -> None:
    mcp_client(alice_key).call("summarize_project", {"project_id": project.pk})
    admin = get_user_model().objects.create_superuser("root", "root@example.com", "pw-root-123")
    client.force_login(admin)
    listing = client.get("/admin/mcp_endpoint/toolcall/")
    assert listing.status_code == 200
    assert b"summarize_project" in listing.content
    assert client.get("/admin/mcp_endpoint/toolcall/add/").status_code == 403
    row = ToolCall.objects.get()
    page = client.get(f"/admin/mcp_endpoint/toolcall/{row.pk}/change/")
    assert page.status_code == 200
    assert b'name="tool"' not in page.content  # shown, not editable


def test_instructions_follow_the_settings(settings: Any, mcp_client: Any, alice_key: str) -> None:
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    }
    first = mcp_client(alice_key).result("initialize", params)
    assert "task tracker" in first["instructions"]
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "INSTRUCTIONS": "Be brief."}
    assert mcp_client(alice_key).result("initialize", params)["instructions"] == "Be brief."
