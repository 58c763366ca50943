"""The suite's own rule for tests that reach no backend (tests/conftest.py): such a test is
marked ``once``, so ``./dev test`` runs it in the SQLite run alone, and it fails if it
reaches the cache, Redis or a child process after all; a test that says it reaches a
database or a backend runs in every database run, with all of them open to it. And what
the suite's settings change for speed leaves the test client serving what it served."""

from __future__ import annotations

import gc
import subprocess
import sys
import weakref
from typing import Any

import pytest
import redis
from django.core.cache import cache

from tests.conftest import BACKEND_FREE, forget_dropped_endpoints

REFUSED = "though it has no database marker: mark it @pytest.mark.backends"


def test_a_test_that_reaches_no_backend_runs_once(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("once") is not None
    assert request.node.stash[BACKEND_FREE]


def test_it_is_refused_the_cache_redis_and_child_processes(
    request: pytest.FixtureRequest,
) -> None:
    with pytest.raises(AssertionError, match=f"reaches the cache {REFUSED}"):
        cache.get("anything")
    with pytest.raises(AssertionError, match=f"reaches Redis {REFUSED}"):
        redis.Redis(host="127.0.0.1", port=6379).ping()
    with pytest.raises(AssertionError, match=f"reaches a child process {REFUSED}"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


@pytest.mark.django_db
def test_a_database_test_runs_in_every_run(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("once") is None
    cache.set("suite-rules", 1)
    assert cache.get("suite-rules") == 1


@pytest.mark.backends
def test_a_test_marked_backends_runs_in_every_run(request: pytest.FixtureRequest) -> None:
    assert request.node.get_closest_marker("once") is None
    assert not request.node.stash.get(BACKEND_FREE, False)
    cache.set("suite-rules", 2)
    assert cache.get("suite-rules") == 2
    assert subprocess.run([sys.executable, "-c", "pass"], check=False).returncode == 0


def test_a_test_with_a_backend_fixture_runs_in_every_run(
    request: pytest.FixtureRequest, private_cache: Any
) -> None:
    assert request.node.get_closest_marker("once") is None


def test_an_endpoint_a_test_made_and_dropped_is_gone_before_the_next() -> None:
    from mcp_endpoint.checks import all_endpoints
    from mcp_endpoint.endpoint import Endpoint, endpoints

    before: weakref.WeakSet[Any] = weakref.WeakSet(endpoints)
    kept = Endpoint("suite-rules-kept")
    gc.disable()  # as if the collector had not run since: the endpoint's cycles keep it
    try:
        Endpoint("suite-rules-dropped").app("https://not-ui/x", html="<!DOCTYPE html>")
        assert "suite-rules-dropped" in {e.name for e in all_endpoints()}
        forget_dropped_endpoints(before)
    finally:
        gc.enable()
    names = {e.name for e in all_endpoints()}
    assert "suite-rules-dropped" not in names
    assert "suite-rules-kept" in names  # still held: it stays
    endpoints.discard(kept)


@pytest.mark.backends  # a request reaches the cache
def test_the_test_client_serves_static_files_from_the_apps(client: Any) -> None:
    # tests/settings.py: no collectstatic folder, and WhiteNoise finds each file as it is
    # asked for, rather than listing them all whenever a test client builds its middleware.
    found = client.get("/static/mcp_endpoint/account.css")
    assert found.status_code == 200
    assert b"".join(found.streaming_content)
