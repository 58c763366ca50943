"""A host without django-oauth-toolkit in INSTALLED_APPS, whose endpoint keeps the default
authentication classes (API keys, then OAuth tokens): ``mcp_endpoint.E071`` says so, and
a bearer value that is not a key is refused rather than a server error.
"""

from __future__ import annotations

import os

SECRET_KEY = "settings-without-oauth-0123456789abcdef0123456789abcdef"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "rest_framework",
    "mcp_endpoint",
]
ROOT_URLCONF = "tests.urls_toolkit_not_installed"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SQLITE_PATH", ":memory:"),
    }
}
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
