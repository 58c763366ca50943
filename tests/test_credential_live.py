"""Credentials and rate limits across processes: gunicorn with four workers, changes made by
``manage.py`` in yet another process.

The server keeps validated API keys in the shared cache (``DEMO_API_KEY_CACHE_SECONDS``): a
file cache on one machine, or Redis when ``REDIS_URL`` is set; with Redis each worker also
keeps them in its own memory (``KEY_MEMORY_SECONDS``, on by default there), dropped over
Redis pub/sub. Each change to a key or its user, made by another process, must take effect
on the very next request, whichever worker answers it; under load, no call that starts
after a revocation is acknowledged may be accepted. The REST budget is
``DEMO_USER_THROTTLE`` per user, counted by the demo's ``AtomicUserRateThrottle``; the
overshoot test needs Redis (a file cache's ``incr`` is not atomic) and is skipped without
``REDIS_URL``.
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.live_server import LiveServer, manage

pytestmark = pytest.mark.e2e

WORKERS = 4
USER_RATE = 20
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


@dataclass
class Host:
    server: LiveServer

    def shell(self, code: str) -> str:
        out = manage(self.server.env, "shell", "-c", code)
        return out.strip().splitlines()[-1] if out.strip() else ""

    def new_user_and_key(self, scopes: str = "read write") -> tuple[str, str, str]:
        """A user of this test's own, with a key: (username, raw key, key prefix)."""
        name = f"u{secrets.token_hex(4)}"
        raw = self.shell(
            "from django.contrib.auth import get_user_model\n"
            "from mcp_endpoint.models import APIKey\n"
            f"user = get_user_model().objects.create_user({name!r}, password='pw-x-12345')\n"
            f"print(APIKey.objects.create_key(user=user, scopes={scopes!r})[1])\n"
        )
        return name, raw, raw.rsplit("_", 1)[0]

    def post(self, key: str, message: Any) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.server.url("/mcp"),
            data=json.dumps(message).encode(),
            headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        )
        return answer_of(request)

    def get(self, key: str, path: str) -> tuple[int, Any]:
        request = urllib.request.Request(
            self.server.url(path), headers={"Authorization": f"Bearer {key}"}
        )
        return answer_of(request)

    def tool_names(self, key: str) -> set[str]:
        status, body = self.post(key, TOOLS_LIST)
        assert status == 200, body
        return {t["name"] for t in body["result"]["tools"]}

    def every_worker(self, key: str, message: Any = PING) -> set[int]:
        """The statuses of enough requests that each worker very likely answers one."""
        return {self.post(key, message)[0] for _ in range(3 * WORKERS)}


def answer_of(request: urllib.request.Request) -> tuple[int, Any]:
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    env = {
        "CACHE_KEY_PREFIX": f"mcp_cred_{secrets.token_hex(4)}",
        "DEMO_API_KEY_CACHE_SECONDS": "300",
        "DEMO_USER_THROTTLE": f"{USER_RATE}/day",
    }
    with LiveServer(tmp_path_factory.mktemp("credential"), workers=WORKERS, env=env) as server:
        manage(server.env, "seed_demo")
        yield Host(server)


# -- the key cache, across processes --------------------------------------------------------


def test_keys_are_cached_across_workers(host: Host) -> None:
    _, raw, prefix = host.new_user_and_key()
    assert "create_task" in host.tool_names(raw)
    # A change that sends no signal is not seen: the workers answer from the shared cache.
    host.shell(
        "from mcp_endpoint.models import APIKey\n"
        f"APIKey.objects.filter(prefix={prefix!r}).update(scope='read')\n"
    )
    assert all("create_task" in host.tool_names(raw) for _ in range(2 * WORKERS))


def test_revocation_takes_effect_on_the_next_request(host: Host) -> None:
    _, raw, prefix = host.new_user_and_key()
    assert host.every_worker(raw) == {200}
    manage(host.server.env, "mcp_key", "revoke", prefix)
    assert host.every_worker(raw) == {401}


def test_a_scope_edit_takes_effect_on_the_next_request(host: Host) -> None:
    _, raw, prefix = host.new_user_and_key()
    assert all("create_task" in host.tool_names(raw) for _ in range(2 * WORKERS))
    host.shell(
        "from mcp_endpoint.models import APIKey\n"
        f"key = APIKey.objects.get(prefix={prefix!r})\n"
        "key.scope = 'read'\n"
        "key.save()\n"
    )
    for _ in range(2 * WORKERS):
        names = host.tool_names(raw)
        assert "create_task" not in names and "list_tasks" in names


def test_an_expiry_edit_takes_effect_on_the_next_request(host: Host) -> None:
    _, raw, prefix = host.new_user_and_key()
    assert host.every_worker(raw) == {200}
    host.shell(
        "from datetime import timedelta\n"
        "from django.utils import timezone\n"
        "from mcp_endpoint.models import APIKey\n"
        f"key = APIKey.objects.get(prefix={prefix!r})\n"
        "key.expires = timezone.now() - timedelta(seconds=1)\n"
        "key.save()\n"
    )
    assert host.every_worker(raw) == {401}


def test_user_deactivation_takes_effect_on_the_next_request(host: Host) -> None:
    name, raw, _ = host.new_user_and_key()
    assert host.every_worker(raw) == {200}
    host.shell(
        "from django.contrib.auth import get_user_model\n"
        f"user = get_user_model().objects.get(username={name!r})\n"
        "user.is_active = False\n"
        "user.save()\n"
    )
    assert host.every_worker(raw) == {401}
    status, body = host.get(raw, "/api/tasks/")
    assert status in (401, 403), body


# -- the REST budget ------------------------------------------------------------------------


def rest_budget_left(host: Host, key: str) -> int:
    for spent in range(USER_RATE + 1):
        if host.get(key, "/api/tasks/")[0] == 429:
            return spent
    raise AssertionError("the REST budget did not run out")


def test_an_sdk_session_costs_one_from_the_rest_budget(host: Host) -> None:
    _, raw, _ = host.new_user_and_key()
    methods: list[str] = []

    async def log(request: httpx2.Request) -> None:
        if request.content:
            methods.append(json.loads(request.content).get("method", ""))

    async def session() -> None:
        headers = {"Authorization": f"Bearer {raw}"}
        async with httpx2.AsyncClient(headers=headers, event_hooks={"request": [log]}) as http:
            transport = streamable_http_client(host.server.url("/mcp"), http_client=http)
            async with Client(transport, mode="legacy") as client:
                await client.list_tools()
                result = await client.call_tool("list_tasks", {})
                assert not result.is_error

    anyio.run(session)
    assert methods[:2] == ["initialize", "notifications/initialized"], methods
    assert methods.count("tools/call") == 1
    assert rest_budget_left(host, raw) == USER_RATE - 1


def test_the_shared_budget_holds_under_concurrency(host: Host) -> None:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs REDIS_URL: a file cache's incr is not atomic across processes")
    _, raw, _ = host.new_user_and_key()
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "list_tasks", "arguments": {}},
    }

    def one(index: int) -> int:
        if index % 2:
            return host.get(raw, "/api/tasks/")[0]
        return host.post(raw, call)[0]

    day = int(time.time() // 86400)
    with ThreadPoolExecutor(16) as pool:
        statuses = list(pool.map(one, range(4 * USER_RATE)))
    windows = int(time.time() // 86400) - day + 1  # the count starts again at midnight UTC
    assert set(statuses) <= {200, 429}, statuses
    served = statuses.count(200)
    assert USER_RATE <= served <= windows * USER_RATE + WORKERS, statuses


# -- each worker's memory of keys, under load -------------------------------------------------

LOAD_THREADS = 6
LIST_TASKS = {
    "jsonrpc": "2.0",
    "id": 4,
    "method": "tools/call",
    "params": {"name": "list_tasks", "arguments": {}},
}


@pytest.fixture(scope="module")
def loaded_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Host]:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("needs REDIS_URL: each worker's memory of keys is kept true over Redis")
    env = {
        "CACHE_KEY_PREFIX": f"mcp_load_{secrets.token_hex(4)}",
        # Far out of reach: every call of the load is answered, none throttled.
        "DEMO_USER_THROTTLE": "1000000/day",
        "DEMO_PROTOCOL_RATE": "1000000/minute",
    }
    with LiveServer(tmp_path_factory.mktemp("load"), workers=2, env=env) as server:
        manage(server.env, "seed_demo")
        yield Host(server)


def test_no_call_is_accepted_after_a_revocation_is_acknowledged(loaded_host: Host) -> None:
    host = loaded_host
    assert host.shell("from mcp_endpoint import key_memory\nprint(key_memory.enabled())") == "True"
    _, raw, prefix = host.new_user_and_key()
    calls: list[tuple[float, int]] = []
    stop = threading.Event()

    def load() -> None:
        while not stop.is_set():
            started = time.monotonic()
            status, _ = host.post(raw, LIST_TASKS)
            calls.append((started, status))

    threads = [threading.Thread(target=load) for _ in range(LOAD_THREADS)]
    for thread in threads:
        thread.start()
    try:
        while sum(status == 200 for _, status in calls) < 20 * LOAD_THREADS:
            time.sleep(0.05)
        # Revoked in another process, which returns once every worker has dropped the key.
        acknowledged = host.shell(
            "from mcp_endpoint import key_memory\n"
            "from mcp_endpoint.models import APIKey\n"
            f"APIKey.objects.get(prefix={prefix!r}).revoke()\n"
            "print(key_memory.memory.acknowledged)\n"
        )
        acknowledged_at = time.monotonic()
        while sum(started > acknowledged_at for started, _ in calls) < 20 * LOAD_THREADS:
            time.sleep(0.05)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert acknowledged == "True"
    before = [status for started, status in calls if started <= acknowledged_at]
    after = [status for started, status in calls if started > acknowledged_at]
    assert before.count(200) >= 20 * LOAD_THREADS
    accepted_after = [status for status in after if status != 401]
    assert accepted_after == [], f"{len(accepted_after)} of {len(after)} calls accepted"
