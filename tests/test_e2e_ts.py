"""The official TypeScript clients against the host under gunicorn, with an API key.

- ``@modelcontextprotocol/sdk`` 1.32 speaks the handshake era only (2025-11-25);
- ``@modelcontextprotocol/client`` 2.4 with ``versionNegotiation: {mode: "auto"}``
  negotiates 2026-07-28, and answers the product's confirmation of a delete through its
  elicitation handler (an input-required round).

Both are pinned in ``tools/clients/package.json`` (with its lock file); the scripts beside
it connect, list the tools, call one and print the outcome as JSON. Set up once with
``npm ci --prefix tools/clients``; without it these tests are skipped, except under CI
(``CI`` set), where they fail.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import ROOT, DemoHost, LiveServer, manage
from tests.test_e2e_sdk import create_key

pytestmark = pytest.mark.e2e

CLIENTS = ROOT / "tools" / "clients"
PACKAGES = {
    "@modelcontextprotocol/sdk": "1.32.2",
    "@modelcontextprotocol/client": "2.4.0",
}


def clients_missing() -> str | None:
    if shutil.which("node") is None:
        return "node is not installed (Node 20 or later)"
    for name, version in PACKAGES.items():
        manifest = CLIENTS / "node_modules" / name / "package.json"
        if not manifest.exists():
            return f"{name} is not installed: run `npm ci --prefix tools/clients`"
        found = json.loads(manifest.read_text())["version"]
        if found != version:
            return f"{name} {found} is installed, the tests pin {version}: run npm ci again"
    return None


@dataclass
class Host(DemoHost):
    def node(self, script: str, *args: str, **env: str) -> dict[str, Any]:
        done = subprocess.run(
            ["node", script, self.server.url("/mcp"), *args],
            cwd=CLIENTS,
            env={**os.environ, "MCP_API_KEY": self.key, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, (
            f"node {script} {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-3000:]}"
            f"\nserver log:\n{self.server.log_tail(20)}"
        )
        result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
        return result


@pytest.fixture(scope="module", params=["stateless", "sessions"])
def host(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        Host]:  # fmt: skip
    reason = clients_missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    workdir: Path = tmp_path_factory.mktemp(f"e2e-ts-{request.param}")
    env = {
        "DEMO_MCP_SESSIONS": "1" if request.param == "sessions" else "0",
        "CACHE_KEY_PREFIX": f"mcp_e2e_ts_{secrets.token_hex(4)}",
        "DATABASE_URL": "",
    }
    with LiveServer(workdir, workers=2, env=env) as server:
        manage(server.env, "seed_demo")
        yield Host(server, create_key(server.env, "alice", "read write"))


def check_listed_and_called(outcome: dict[str, Any]) -> None:
    assert outcome["server"]["name"] == "task-tracker"
    assert {"list_projects", "delete_task", "summarize_project"} <= set(outcome["tools"])
    result = outcome["result"]
    assert result["isError"] is False, result
    assert result["structuredContent"]["count"] >= 1
    assert "Website relaunch" in result["content"][0]["text"]


def test_sdk_1_client_speaks_the_legacy_revision(host: Host) -> None:
    outcome = host.node("legacy.mjs", "list_projects")
    assert outcome["protocolVersion"] == "2025-11-25"
    check_listed_and_called(outcome)
    sessions_on = host.server.env.get("DEMO_MCP_SESSIONS") == "1"
    assert (outcome["sessionId"] is not None) is sessions_on
    assert "resultType" not in outcome["result"]


def test_v2_client_in_auto_mode_negotiates_the_modern_revision(host: Host) -> None:
    outcome = host.node("modern.mjs", "list_projects", "{}", "auto")
    assert outcome["protocolVersion"] == "2026-07-28"
    assert outcome["era"] == "modern"
    check_listed_and_called(outcome)


def test_v2_client_in_legacy_mode(host: Host) -> None:
    outcome = host.node("modern.mjs", "list_projects", "{}", "legacy")
    assert outcome["protocolVersion"] == "2025-11-25"
    check_listed_and_called(outcome)


@pytest.mark.parametrize("answer", ["accept", "decline"])
def test_v2_client_answers_the_delete_confirmation(host: Host, answer: str) -> None:
    pk = host.new_task()
    outcome = host.node("modern.mjs", "delete_task", json.dumps({"id": pk}), "auto",
                        MCP_CONFIRM=answer)  # fmt: skip
    assert outcome["protocolVersion"] == "2026-07-28"
    # The object named as a person would: its kind and its title, from REST's representation.
    assert outcome["asked"] == [
        "Delete task: the task “Delete me”. This cannot be undone. Go ahead?"
    ]
    assert outcome["result"]["isError"] is (answer != "accept")
    assert host.task_exists(pk) is (answer != "accept")


def test_v2_client_without_elicitation_is_not_asked(host: Host) -> None:
    pk = host.new_task()
    outcome = host.node("modern.mjs", "delete_task", json.dumps({"id": pk}), "auto")
    assert outcome["asked"] == []
    assert outcome["result"]["isError"] is False
    assert not host.task_exists(pk)


def test_v2_client_in_legacy_mode_is_asked_only_in_a_session(host: Host) -> None:
    # In a legacy session the question is a request the server sends during the call;
    # without a session the server cannot know the client's capabilities: it refuses.
    pk = host.new_task()
    outcome = host.node("modern.mjs", "delete_task", json.dumps({"id": pk}), "legacy",
                        MCP_CONFIRM="decline")  # fmt: skip
    assert outcome["protocolVersion"] == "2025-11-25"
    in_session = host.server.env.get("DEMO_MCP_SESSIONS") == "1"
    assert len(outcome["asked"]) == (1 if in_session else 0)
    assert outcome["result"]["isError"] is True
    code = "not_confirmed" if in_session else "confirmation_unavailable"
    assert outcome["result"]["structuredContent"]["error"]["code"] == code
    assert host.task_exists(pk)
