"""The demo host's own deployment check: its secret key is public, so never deploy it."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Tags, register


@register(Tags.security, deploy=True)
def check_demo_secret_key(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    demo_key = getattr(settings, "DEMO_SECRET_KEY", None)
    if demo_key is None or demo_key != settings.SECRET_KEY:
        return []
    return [
        Error(
            "SECRET_KEY is the demo's key, which is published with the source code: anyone "
            "can sign sessions, password reset links and the API key reveal cookie with it.",
            hint="Set DJANGO_SECRET_KEY to a long random value of your own.",
            id="tracker.E001",
        )
    ]
