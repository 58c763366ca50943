"""The demo host's worker as its server starts it (``project.wsgi``): the garbage
collector rests while the process starts (``project.settings``) and runs again once the
apps are ready, with what start-up built set aside (``project.tracker.apps``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent

WORKER = """
import gc, json, sys

import project.settings

resting = not gc.isenabled()
import project.wsgi

print(json.dumps({
    "resting_at_start": resting,
    "enabled": gc.isenabled(),
    "set_aside": gc.get_freeze_count(),
    "thresholds": list(gc.get_threshold()),
}))
"""


def run_in_a_demo_process(script: str, tmp_path: Path) -> dict[str, Any]:
    """What ``script`` prints last (JSON), run by a new interpreter with the demo's settings
    and a SQLite file of its own, as a server's worker would start."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "project.settings", "PYTHONPATH": str(ROOT)}
    env["SQLITE_PATH"] = str(tmp_path / "db.sqlite3")
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return seen


@pytest.mark.backends
def test_the_collector_runs_once_the_worker_has_started(tmp_path: Path) -> None:
    seen = run_in_a_demo_process(WORKER, tmp_path)
    assert seen["resting_at_start"]
    # Running again, with its usual thresholds, and start-up's objects out of its walks.
    assert seen["enabled"]
    assert seen["thresholds"] == list(__import__("gc").get_threshold())
    assert seen["set_aside"] > 100_000


def test_the_test_process_collects_as_usual() -> None:
    # The suite's settings start from the demo's: its own processes run the collector too.
    import gc

    assert gc.isenabled()
    assert gc.get_freeze_count() > 0
