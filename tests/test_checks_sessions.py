"""System checks of the sessions, streaming and multi round-trip settings: one test per id."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.cache.backends.locmem import LocMemCache

from mcp_endpoint.checks import check_sessions_and_rounds, check_settings
from tests.test_checks import PREFIX, MakeEndpoint, check_id, make_endpoint, messages, only

__all__ = ["make_endpoint"]  # the fixture, shared with tests/test_checks.py

CHECK = check_sessions_and_rounds
# The type of each value is checked with every other key's.
TYPES = check_settings


def test_the_project_passes() -> None:
    assert [m.id for m in CHECK() if m.is_serious()] == []


@pytest.mark.parametrize("key", ["SESSIONS", "CONFIRM_DESTRUCTIVE_TOOLS", "STREAMING", "LOGGING"])
def test_flags_must_be_booleans(make_endpoint: MakeEndpoint, key: str) -> None:
    make_endpoint(**{key: "yes"})
    message = only(TYPES, check_id(key))
    assert key in message.msg
    assert PREFIX in message.msg


def test_booleans_pass(make_endpoint: MakeEndpoint) -> None:
    good = {"SESSIONS": False, "CONFIRM_DESTRUCTIVE_TOOLS": True, "STREAMING": True}
    make_endpoint(LOGGING=False, **good)
    for key in (*good, "LOGGING"):
        assert messages(TYPES, check_id(key)) == []


@pytest.mark.parametrize(
    "key",
    [
        "SESSION_IDLE_SECONDS",
        "SESSIONS_PER_CREDENTIAL",
        "REQUEST_STATE_TTL",
        "CLIENT_REQUEST_TIMEOUT",
        "STREAM_KEEPALIVE_SECONDS",
        "STREAM_RESUME_SECONDS",
        "SUBSCRIPTIONS_PER_SESSION",
        "LISTEN_MAX_URIS",
        "LOG_RETENTION_DAYS",
        "SINGLE_THREADED_CLIENT_REQUEST_TIMEOUT",
        "STREAMED_CALLS_PER_CREDENTIAL",
        "PENDING_CLIENT_REQUESTS_PER_CREDENTIAL",
    ],
)
@pytest.mark.parametrize("value", [0, -5, "600", 1.5, True])
def test_durations_and_counts_are_positive_integers(
    make_endpoint: MakeEndpoint, key: str, value: Any
) -> None:
    make_endpoint(**{key: value})
    assert key in only(TYPES, check_id(key)).msg


def test_positive_integers_pass(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(SESSION_IDLE_SECONDS=60, SESSIONS_PER_CREDENTIAL=1, REQUEST_STATE_TTL=30)
    make_endpoint(LOG_RETENTION_DAYS=None)
    for key in ("SESSION_IDLE_SECONDS", "SESSIONS_PER_CREDENTIAL", "REQUEST_STATE_TTL"):
        assert messages(TYPES, check_id(key)) == []
    assert messages(TYPES, check_id("LOG_RETENTION_DAYS")) == []


@pytest.mark.parametrize("cap", [32, 40])
def test_e009_one_credential_cannot_take_the_whole_pool(
    make_endpoint: MakeEndpoint, cap: int
) -> None:
    make_endpoint(STREAMED_CALLS_PER_CREDENTIAL=cap)
    assert "STREAM_POOL_SIZE (32)" in only(CHECK, "mcp_endpoint.E009").msg


def test_e009_the_pool_size_is_read_from_mcp_endpoint(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "STREAM_POOL_SIZE": 4}
    [error] = [m for m in CHECK() if m.id == "mcp_endpoint.E009"]
    assert error.msg.startswith("MCP_ENDPOINT['STREAMED_CALLS_PER_CREDENTIAL'] is 8")
    assert "STREAM_POOL_SIZE (4)" in error.msg
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "STREAMED_CALLS_PER_CREDENTIAL": 3}
    assert [m for m in CHECK() if m.id == "mcp_endpoint.E009"] == []


def test_e009_a_cap_below_the_pool_passes(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(STREAMED_CALLS_PER_CREDENTIAL=31)
    assert messages(CHECK, "mcp_endpoint.E009") == []


def test_e008_cache_must_exist(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(CACHE="sessions")
    message = only(TYPES, "mcp_endpoint.E008")
    assert "'sessions'" in message.msg
    assert "default" in (message.hint or "")


def test_e008_known_cache_passes(make_endpoint: MakeEndpoint) -> None:
    make_endpoint(CACHE="default")
    assert messages(TYPES, "mcp_endpoint.E008") == []


class HostLocMemCache(LocMemCache):
    """A host's subclass of a per-process cache: still per process."""


@pytest.mark.backends
@pytest.mark.parametrize(
    "backend", ["django.core.cache.backends.locmem.LocMemCache", f"{__name__}.HostLocMemCache"]
)
def test_w009_sessions_in_a_process_local_cache(
    make_endpoint: MakeEndpoint, settings: Any, backend: str
) -> None:
    settings.CACHES = {**settings.CACHES, "local": {"BACKEND": backend}}
    make_endpoint(SESSIONS=True, CACHE="local")
    [warning] = messages(CHECK, "mcp_endpoint.W009")
    assert not warning.is_serious()
    assert "LocMemCache" in warning.msg


@pytest.mark.backends
def test_w009_not_raised_for_a_shared_cache_or_without_sessions(
    make_endpoint: MakeEndpoint, settings: Any
) -> None:
    settings.CACHES = {
        **settings.CACHES,
        "local": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    }
    make_endpoint("-a", SESSIONS=True, CACHE="default")
    make_endpoint("-b", SESSIONS=False, CACHE="local")
    assert messages(CHECK, "mcp_endpoint.W009") == []


@pytest.mark.parametrize("value", ["mcp_endpoint", ["mcp_endpoint", ""], [3], None])
def test_e080_client_loggers_are_logger_names(make_endpoint: MakeEndpoint, value: Any) -> None:
    if value is None:
        make_endpoint(CLIENT_LOGGERS=["mcp_endpoint", "myapp.tools"])
        assert messages(TYPES, "mcp_endpoint.E080") == []
        return
    make_endpoint(CLIENT_LOGGERS=value)
    message = only(TYPES, "mcp_endpoint.E080")
    assert "CLIENT_LOGGERS" in message.msg
    assert message.hint
