"""The demo host's deployment check refuses its published secret key."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.checks import run_checks
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from project import settings as demo_settings


def ids(include_deployment_checks: bool) -> set[str]:
    return {m.id for m in run_checks(include_deployment_checks=include_deployment_checks) if m.id}


@pytest.mark.backends
def test_the_demo_key_is_refused_for_deployment(settings: Any) -> None:
    settings.SECRET_KEY = demo_settings.DEMO_SECRET_KEY
    assert "tracker.E001" in ids(include_deployment_checks=True)
    # Only for deployment: the demo itself starts.
    assert "tracker.E001" not in ids(include_deployment_checks=False)
    with pytest.raises(SystemCheckError, match=r"tracker\.E001"):
        call_command("check", "--deploy", "--tag", "security")


@pytest.mark.backends
def test_a_key_of_ones_own_passes(settings: Any) -> None:
    settings.SECRET_KEY = "a-key-of-our-own-" + "x" * 50
    assert "tracker.E001" not in ids(include_deployment_checks=True)
