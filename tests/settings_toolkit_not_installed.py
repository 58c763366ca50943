"""A host without django-oauth-toolkit in INSTALLED_APPS, whose endpoint keeps the default
authentication classes (API keys, then OAuth tokens): a bearer value that is not a key is
refused rather than a server error. With ``NAME_OAUTH_CLASS`` in the environment the host
names the OAuth class itself, and ``mcp_endpoint.E071`` says it cannot work.
"""

from __future__ import annotations

import os

from project.database_url import database_from_url

SECRET_KEY = "settings-without-oauth-0123456789abcdef0123456789abcdef"
DEBUG = False
ALLOWED_HOSTS = ["testserver"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "rest_framework",
    "mcp_endpoint",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
# The app's key class on the REST API, and no scope permission listed: the class applies
# the scope policy itself, as it did before the permission existed.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["mcp_endpoint.authentication.APIKeyAuthentication"],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
}
ROOT_URLCONF = "tests.urls_toolkit_not_installed"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SQLITE_PATH", ":memory:"),
    }
}
if os.environ.get("DATABASE_URL"):
    # A server of the suite on PostgreSQL (tests/test_migrated_templates.py's): its few
    # apps migrate in a second, where the demo's take several.
    DATABASES["default"] = database_from_url(os.environ["DATABASE_URL"])
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
USE_TZ = True
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
if os.environ.get("NAME_OAUTH_CLASS"):
    MCP_ENDPOINT = {
        "AUTHENTICATION_CLASSES": [
            "mcp_endpoint.authentication.APIKeyAuthentication",
            "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        ]
    }
