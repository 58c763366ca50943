"""The load and soak tests: ``tests/test_load.py`` at the size of a load test.

``./dev bench load`` runs them on PostgreSQL and Redis (``DATABASE_URL``, ``REDIS_URL``);
the suite runs the same tests with a few hundred requests. Each one starts its own
servers on loopback and stops them by their PIDs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_load import limited_database_url, mixed_load, stays_within_a_connection_limit

__all__ = ["limited_database_url"]  # the fixture, found by pytest in this module

pytestmark = pytest.mark.e2e


def test_uvicorn_stays_within_a_30_connection_limit_under_load(
    tmp_path: Path, limited_database_url: str
) -> None:
    stays_within_a_connection_limit(tmp_path, limited_database_url, requests=2000)


def test_mixed_mcp_and_rest_soak(tmp_path: Path) -> None:
    # 4,000 of the 5,000 requests are work: the last thousand or so meet the limit.
    mixed_load(tmp_path, requests=5000, user_rate=3000)
