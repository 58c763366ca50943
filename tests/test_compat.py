"""Other libraries where they are optional or where only their insides serve
(:mod:`mcp_endpoint.compat`): a host without django-oauth-toolkit never imports it, and each
private attribute the app reads is read in one place, checked here against the installed
version so that an upstream change fails a test rather than a host."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from drf_spectacular.drainage import add_trace_message, error, warn

from mcp_endpoint.compat import spectacular_messages
from tests.test_demo_worker import run_in_a_demo_process

ROOT = Path(__file__).resolve().parent.parent

# The modules that make the authorisation server out of the toolkit: loaded only where the
# toolkit is in use (mcp_endpoint.compat.oauth_enabled), so a host without it never loads
# them. The task worker's command needs django-tasks' database backend, another option.
TOOLKIT_MODULES = {
    f"mcp_endpoint.oauth.{name}"
    for name in (
        "admin",
        "cleanup",
        "metadata",
        "parameters",
        "registration",
        "revocation",
        "urls",
        "validators",
        "views",
    )
}
NEEDS_TASKS_DB = {"mcp_endpoint.management.commands.mcp_task_worker"}

# Run with the toolkit installed but not in INSTALLED_APPS: a finder ahead of every other
# refuses to find it, and notes each time anything asks, so that an import guarded by
# ``except ImportError`` is seen too.
WITHOUT_THE_TOOLKIT = """
import importlib, importlib.abc, json, pkgutil, sys

asked = []


def asker():
    # The module whose code asked: the first frame outside the import machinery.
    frame = sys._getframe(2)
    while frame.f_globals.get("__name__", "").startswith(
        ("importlib", "_frozen_importlib", "django.utils.module_loading")
    ):
        frame = frame.f_back
    return frame.f_globals.get("__name__", "")


class NoToolkit(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "oauth2_provider":
            asked.append([name, asker()])
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoToolkit())
import django

django.setup()
from django.core.management import call_command

call_command("migrate", verbosity=0)
import mcp_endpoint

skipped = set(json.loads(sys.argv[1]))
imported = []
for module in pkgutil.walk_packages(mcp_endpoint.__path__, "mcp_endpoint."):
    if module.name not in skipped:
        importlib.import_module(module.name)
        imported.append(module.name)

from django.contrib.auth import get_user_model
from django.test import Client
from mcp_endpoint.models import APIKey

alice = get_user_model().objects.create_superuser("alice", "alice@example.com", "pw")
_, key = APIKey.objects.create_key(user=alice, name="k", scopes="read")
client = Client(raise_request_exception=False)
bearer = {"Authorization": "Bearer " + key, "MCP-Protocol-Version": "2025-11-25"}


def mcp(method, params):
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    return client.post("/mcp", body, content_type="application/json", headers=bearer).json()


listed = mcp("tools/list", {})["result"]["tools"]
called = mcp("tools/call", {"name": "list_users", "arguments": {}})["result"]
writing = mcp("tools/call", {"name": "create_user", "arguments": {"username": "bob"}})["result"]
rest_read = client.get("/api/users/", headers=bearer)
rest_write = client.post(
    "/api/users/", {"username": "bob"}, content_type="application/json", headers=bearer
)
client.force_login(alice)
form = client.get("/admin/mcp_endpoint/apikey/add/")
print(json.dumps({
    "imported": len(imported),
    "tools": sorted(t["name"] for t in listed),
    "called": called["structuredContent"],
    "writing": writing["structuredContent"]["error"]["code"],
    "rest": [rest_read.status_code, rest_write.status_code, rest_write.json()],
    "form": [form.status_code, b'value="read"' in form.content],
    "asked": asked,
    "loaded": sorted(m for m in sys.modules if m.split(".")[0] == "oauth2_provider"),
}))
"""


@pytest.mark.once
def test_a_host_without_the_toolkit_never_imports_it() -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings_toolkit_not_installed",
        "PYTHONPATH": str(ROOT),
    }
    skipped = json.dumps(sorted(TOOLKIT_MODULES | NEEDS_TASKS_DB))
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_THE_TOOLKIT, skipped],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["loaded"] == []
    # drf-spectacular's own extension for the toolkit's class tries the import whenever it
    # describes a view (and drops the extension when it fails); nothing of the app's does.
    assert {who.split(".")[0] for _, who in seen["asked"]} <= {"drf_spectacular"}
    assert seen["imported"] > 80  # every other module of the app, the core ones among them
    assert seen["tools"] == ["list_users"]  # create_user needs "write"
    assert seen["called"] == {"results": [{"id": 1, "username": "alice"}]}
    # The scope policy holds without the toolkit, on both sides: a "read" key cannot write.
    assert seen["writing"] == "insufficient_scope"
    assert seen["rest"] == [
        200,
        403,
        {"detail": "This action needs the scope(s) write; the credential holds read."},
    ]
    assert seen["form"] == [200, True]


# -- drf-spectacular's record of its messages -------------------------------------------------


class DescribedView:
    """A view drf-spectacular is describing, for its trace of breadcrumbs."""


def test_spectacular_messages_are_collected_silenced(capsys: pytest.CaptureFixture[str]) -> None:
    with spectacular_messages() as messages, add_trace_message(DescribedView):
        warn("a field without a type")
        error("no serializer")
    [warning] = messages.warnings
    assert warning.endswith("Warning [DescribedView]: a field without a type")
    [failure] = messages.errors
    assert failure.endswith("Error [DescribedView]: no serializer")
    assert capsys.readouterr().err == ""  # silenced
    with spectacular_messages() as later:
        warn("another")
    assert len(later.warnings) == 1 and later.warnings[0].endswith("Warning: another")


def test_a_view_that_raises_leaves_no_trace_behind() -> None:
    with (
        pytest.raises(ZeroDivisionError),
        spectacular_messages(),
        add_trace_message(DescribedView),
    ):
        1 / 0  # noqa: B018
    with spectacular_messages() as later:
        warn("after the failure")
    # Without the trace dropped, the failed view's name would prefix this warning.
    assert "DescribedView" not in later.warnings[0]


# -- drf-spectacular's django-filter extension and GeoDjango ------------------------------------

# The demo host's worker, as gunicorn starts it: its tools (filters among them) are built at
# import (mcp_endpoint.warmup). What it loaded of GeoDjango, and what the extension says of
# a filter, with and without rest_framework_gis in reach.
DESCRIBING_FILTERS = """
import importlib.abc, json, sys


class NoGeoFilters(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == "rest_framework_gis":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, NoGeoFilters())
import project.wsgi
from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from mcp_endpoint.warmup import mounted_endpoints
from project.tracker.filters import TaskFilter

print(json.dumps({
    "tools": sorted(t.name for e in mounted_endpoints() for t in e.tools),
    "gdal": sorted(m for m in sys.modules if m.startswith("django.contrib.gis")),
    "is_gis": [DjangoFilterExtension._is_gis(f) for f in TaskFilter.base_filters.values()],
}))
"""


@pytest.mark.backends
def test_describing_filters_never_looks_for_gdal(tmp_path: Path) -> None:
    seen = run_in_a_demo_process(DESCRIBING_FILTERS, tmp_path)
    assert "list_tasks" in seen["tools"]  # the tool whose arguments are TaskFilter's
    # drf-spectacular's own answer, read from the attribute it keeps: no geometry, and
    # GeoDjango never imported (its import looks for the GDAL library).
    assert seen["is_gis"] and not any(seen["is_gis"])
    assert seen["gdal"] == []


def test_the_extension_still_remembers_geodjango_in_the_attribute_set() -> None:
    # skip_absent_geodjango() sets DjangoFilterExtension._has_gis; the day drf-spectacular
    # stops reading it (or renames it), the search for GDAL is back in every worker.
    import inspect

    from drf_spectacular.contrib.django_filters import DjangoFilterExtension

    source = inspect.getsource(DjangoFilterExtension._is_gis)
    assert "getattr(cls, '_has_gis', True)" in source.replace('"', "'")
    assert "cls._has_gis = False" in source
