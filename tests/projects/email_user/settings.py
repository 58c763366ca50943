"""A small host whose users sign in by email; only what the app needs, no demo."""

from __future__ import annotations

import os
from pathlib import Path

from mcp_endpoint.oauth import provider_settings

HERE = Path(__file__).resolve().parent

SECRET_KEY = "email-user-host-" + "x" * 40
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "oauth2_provider",
    "mcp_endpoint",
    "tests.projects.email_user",
]
AUTH_USER_MODEL = "email_user.EmailUser"
MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
ROOT_URLCONF = "tests.projects.email_user.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SQLITE_PATH", str(HERE / "db.sqlite3")),
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
STATIC_URL = "static/"
STATIC_ROOT = os.environ.get("STATIC_ROOT", str(HERE / ".static"))
LOGIN_URL = "/accounts/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": ["mcp_endpoint.authentication.APIKeyAuthentication"],
}
OAUTH2_PROVIDER = provider_settings(
    existing={"SCOPES": {"read": "Read your things", "write": "Change your things"}}
)
MCP_ENDPOINT = {
    "SERVER_NAME": "email-host",
    "AUTHENTICATION_CLASSES": [
        "mcp_endpoint.authentication.APIKeyAuthentication",
        "mcp_endpoint.authentication.OAuth2TokenAuthentication",
        "rest_framework_simplejwt.authentication.JWTAuthentication",
    ],
}
