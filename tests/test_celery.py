"""The Celery backend in process: what it sends, when, and what it refuses (no broker).

The live test (tests/test_celery_live.py) runs it on a real worker and RabbitMQ.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest

pytest.importorskip("celery")

from celery import Celery
from django.core.exceptions import ImproperlyConfigured

from mcp_endpoint.celery import RUN, CeleryBackend, own_aliases
from mcp_endpoint.tasks import run_tool_task
from tests.live_server import ROOT

# An app of the test's own, never connected: sending is replaced by recording.
app = Celery("tests", broker="memory://", set_as_current=False)


def backend(**options: Any) -> CeleryBackend:
    return CeleryBackend("celery", {"OPTIONS": {"APP": "tests.test_celery.app", **options}})


@pytest.mark.django_db(transaction=False)
def test_a_task_is_sent_once_its_transaction_commits(
    django_capture_on_commit_callbacks: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(app, "send_task", lambda name, **options: sent.append((name, options)))
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        result = backend(QUEUE="mcp").enqueue(run_tool_task, ["abc"], {})
        assert sent == []  # not before the commit
    assert len(callbacks) == 1
    callbacks[0]()
    [(name, options)] = sent
    assert name == RUN
    assert options["args"] == [run_tool_task.module_path, ["abc"], {}]
    assert options["task_id"] == result.id
    assert options["queue"] == "mcp"  # the framework's default queue goes to QUEUE
    assert result.status == "READY" and result.backend == "celery"


def test_send_options_map_queues_and_priorities(settings: Any) -> None:
    settings.TASKS = {"default": {**settings.TASKS["default"], "QUEUES": ["default", "reports"]}}
    task = run_tool_task.using(queue_name="reports", priority=100)
    options = backend(QUEUE="mcp").send_options(task, "id")
    assert options["queue"] == "reports"
    assert options["priority"] == 9
    assert "queue" not in backend().send_options(run_tool_task, "id")  # Celery's own default


def needs_context(context: Any) -> None:
    return None


def test_a_task_that_takes_a_context_is_refused() -> None:
    task = type(run_tool_task)(func=needs_context, takes_context=True)
    with pytest.raises(ImproperlyConfigured, match="takes a context"):
        backend().validate_task(task)


def test_e094_an_app_that_cannot_be_imported(settings: Any) -> None:
    assert [m.id for m in backend().check()] == []
    found = CeleryBackend("celery", {"OPTIONS": {"APP": "tests.nowhere.app"}}).check()
    assert [m.id for m in found] == ["mcp_endpoint.E094"]


def test_own_aliases_are_the_backends_named_in_tasks(settings: Any) -> None:
    settings.TASKS = {
        "default": {"BACKEND": "django_tasks_db.DatabaseBackend"},
        "celery": {"BACKEND": "mcp_endpoint.celery.CeleryBackend"},
        "hosts": {"BACKEND": "tests.celery_host.HostCeleryBackend"},
        "missing": {"BACKEND": "tests.nowhere.Backend"},
    }
    assert own_aliases() == ["celery", "hosts"]


@pytest.mark.once
def test_a_host_without_the_backend_never_imports_celery() -> None:
    script = (
        "import sys, django; django.setup(); "
        "from mcp_endpoint import site; site.urls; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'celery'))"
    )
    assert last_line_printed(script) == "[]"


@pytest.mark.once
def test_a_worker_of_a_host_subclass_of_the_backend_is_ready_to_say_it_is_alive() -> None:
    # Nothing imports the host's backend before the worker is ready: the app does, so that
    # the backend's worker signals are connected by then.
    script = (
        "import sys, django, tests.settings as s; "
        "s.TASKS = {'default': {'BACKEND': 'tests.celery_host.HostCeleryBackend'}}; "
        "django.setup(); "
        "print('mcp_endpoint.celery' in sys.modules)"
    )
    # Importing the module connects its worker_ready and worker_shutdown receivers.
    assert last_line_printed(script) == "True"


def last_line_printed(script: str) -> str:
    """The last line ``script`` prints, run by a fresh interpreter on the test settings."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    return done.stdout.strip().splitlines()[-1]
