"""Setting OAuth up: the toolkit's settings from one call, the system checks of the OAuth
set-up (one test per id), and a host without django-oauth-toolkit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.test import Client

from mcp_endpoint import compat
from mcp_endpoint.checks import check_settings
from mcp_endpoint.conf import SETTINGS_BY_NAME
from mcp_endpoint.oauth import provider_settings
from mcp_endpoint.oauth.checks import check_oauth, check_oauth_deploy, check_oauth_settings
from mcp_endpoint.oauth.provider import MCP_PROVIDER_SETTINGS, PKCERequired
from tests.live_server import create_database, drop_database

ROOT = Path(__file__).resolve().parent.parent


# -- provider_settings --------------------------------------------------------------------------


def test_provider_settings_give_what_mcp_clients_need() -> None:
    settings = provider_settings()
    assert settings["PKCE_REQUIRED"] is True
    assert settings["COMPLIANT_BCP_RFC9700_PKCE_METHOD"] is True  # S256 only
    assert settings["COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT"] is True
    assert settings["COMPLIANT_BCP_RFC9700_PASSWORD_GRANT"] is True
    assert settings["DCR_ENABLED"] is True
    assert settings["OAUTH2_VALIDATOR_CLASS"] == "mcp_endpoint.oauth.validators.OAuth2Validator"
    assert "none" in settings["OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED"]


def test_provider_settings_keep_the_hosts_own() -> None:
    existing = {
        "SCOPES": {"tasks": "Your tasks"},
        "ACCESS_TOKEN_EXPIRE_SECONDS": 600,
        "DCR_ENABLED": False,
        "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["client_secret_basic"],
        "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "com.example.app"],
    }
    settings = provider_settings(existing=existing, ACCESS_TOKEN_EXPIRE_SECONDS=300)
    # The host's scopes beside the ones the default scope policy asks for.
    assert settings["SCOPES"] == {
        "read": "Reading scope",
        "write": "Writing scope",
        "tasks": "Your tasks",
    }
    assert settings["ACCESS_TOKEN_EXPIRE_SECONDS"] == 300
    assert settings["DCR_ENABLED"] is False
    assert settings["OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED"] == [
        "client_secret_basic",
        "client_secret_post",
        "none",
    ]
    assert settings["ALLOWED_REDIRECT_URI_SCHEMES"] == [
        "https",
        "com.example.app",
        "http",
        "cursor",
    ]
    assert existing["ACCESS_TOKEN_EXPIRE_SECONDS"] == 600, "the host's dict is not changed"
    assert MCP_PROVIDER_SETTINGS["DCR_ENABLED"] is True


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT", False),
        ("COMPLIANT_BCP_RFC9700_PASSWORD_GRANT", False),
    ],
)
def test_provider_settings_refuse_to_weaken_grants(key: str, value: Any) -> None:
    with pytest.raises(ImproperlyConfigured, match=key):
        provider_settings(existing={key: value})


def own_policy(client_id: str) -> bool:
    return client_id == "strict-client"


@pytest.mark.parametrize("own", [False, own_policy])
def test_provider_settings_keep_a_hosts_pkce_for_its_own_clients(own: Any) -> None:
    existing = {
        "PKCE_REQUIRED": own,
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": False,
        "SCOPES": {"orders": "Your orders", "read": "Read everything"},
    }
    settings = provider_settings(existing=existing, SCOPES={"write": "Change everything"})
    assert settings["PKCE_REQUIRED"] == PKCERequired(own)
    assert settings["COMPLIANT_BCP_RFC9700_PKCE_METHOD"] is False
    assert settings["SCOPES"] == {
        "read": "Read everything",
        "write": "Change everything",
        "orders": "Your orders",
    }
    # Passing the result again (a settings module read twice) changes nothing.
    assert provider_settings(existing=settings) == settings


def test_the_demo_host_uses_provider_settings(settings: Any) -> None:
    assert settings.OAUTH2_PROVIDER["OAUTH2_VALIDATOR_CLASS"] == (
        "mcp_endpoint.oauth.validators.OAuth2Validator"
    )
    assert settings.OAUTH2_PROVIDER["SCOPES"]["read"] == "See your projects, tasks and comments"


# -- checks ------------------------------------------------------------------------------------


def ids(messages: list[Any]) -> list[str]:
    return [m.id for m in messages]


def test_the_demo_host_passes_the_oauth_checks() -> None:
    assert check_oauth() == []
    assert check_oauth_deploy() == []
    assert check_oauth_settings() == []


@pytest.mark.backends
def test_e070_the_challenge_names_an_unmounted_metadata_url(settings: Any, client: Client) -> None:
    # The endpoint is mounted, the OAuth URLs are not: the 401 points clients at a 404.
    settings.ROOT_URLCONF = "tests.urls_toolkit_not_installed"
    challenge = client.post("/mcp", "{}", content_type="application/json")["WWW-Authenticate"]
    assert 'resource_metadata="http://testserver/.well-known/oauth-protected-resource/mcp"' in (
        challenge
    )
    assert client.get("/.well-known/oauth-protected-resource/mcp").status_code == 404
    [message] = [m for m in check_oauth() if m.id == "mcp_endpoint.E070"]
    assert message.is_serious()
    assert "/.well-known/oauth-protected-resource/mcp" in message.msg
    assert message.hint is not None and "mcp_endpoint.oauth.urls" in message.hint


@pytest.mark.backends
def test_e071_oauth_tokens_named_without_the_toolkit_installed() -> None:
    result = run_without_oauth("-m", "django", "check", name_oauth=True)
    assert result.returncode == 1
    assert "mcp_endpoint.E071" in result.stderr
    assert "INSTALLED_APPS" in result.stderr


@pytest.mark.backends
def test_without_the_toolkit_the_default_classes_pass_the_checks() -> None:
    # Installed without the "oauth" extra: the OAuth class of the defaults passes bearer
    # values on, and API keys are what the endpoint takes.
    result = run_without_oauth("-m", "django", "check", "--fail-level", "WARNING")
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("3.4.0", True),
        ("3.4.1", True),
        ("3.12.0", True),
        ("3.5.0rc1", True),
        ("3.3.2", False),
        ("2.3.0", False),
        ("1.7.1", False),
        ("4.0.0", False),
        (None, False),
    ],
)
def test_the_toolkit_versions_oauth_for_mcp_clients_runs_on(
    version: str | None, supported: bool
) -> None:
    assert compat.version_supported(version) is supported


@pytest.fixture
def older_toolkit(monkeypatch: pytest.MonkeyPatch) -> None:
    """The host keeps django-oauth-toolkit 2.3 for its own clients (as the version it reports:
    a whole run on 2.3 is the "oauth-old" check of docs/compatibility.md)."""
    monkeypatch.setattr(compat, "toolkit_version", lambda: "2.3.0")


@pytest.mark.usefixtures("older_toolkit")
def test_w075_an_older_toolkit_turns_oauth_for_mcp_clients_off() -> None:
    [message] = check_oauth()
    assert message.id == "mcp_endpoint.W075" and not message.is_serious()
    assert "2.3.0" in message.msg and "3.4" in message.msg
    assert message.hint is not None and "mcp-endpoint[oauth]" in message.hint
    # Nothing of our OAuth set-up is checked against a toolkit it does not run on.
    assert check_oauth_settings() == []


@pytest.mark.usefixtures("older_toolkit")
def test_with_an_older_toolkit_the_products_own_oauth_keeps_working(
    client: Client, alice: Any
) -> None:
    from datetime import timedelta

    from django.utils import timezone
    from oauth2_provider.models import AccessToken

    AccessToken.objects.create(
        user=alice,
        token="the-products-own-token-0123456789",
        scope="read write",
        expires=timezone.now() + timedelta(hours=1),
    )
    bearer = {"Authorization": "Bearer the-products-own-token-0123456789"}
    # The product's REST API lists the toolkit's own class, which is the product's.
    assert client.get("/api/projects/", headers=bearer).status_code == 200
    # /mcp takes API keys only: any other bearer value is refused, never a server error.
    ping = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    answer = client.post("/mcp", ping, content_type="application/json", headers=bearer)
    assert answer.status_code == 401
    assert answer["WWW-Authenticate"].startswith("Bearer ")


def test_w072_unbound_tokens_accepted_warns_on_deploy(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_ACCEPT_UNBOUND_TOKENS": True}
    [message] = check_oauth_deploy()
    assert message.id == "mcp_endpoint.W072" and not message.is_serious()
    assert message.hint is not None and "resource=" in message.hint
    with pytest.raises(SystemCheckError, match=r"mcp_endpoint\.W072"):
        call_command("check", "--deploy", "--fail-level", "WARNING", "--tag", "security")


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("OAUTH_ACCEPT_UNBOUND_TOKENS", "yes"),
        ("OAUTH_UNUSED_CLIENT_SECONDS", -1),
        ("OAUTH_UNUSED_CLIENT_SECONDS", "1 day"),
    ],
)
def test_oauth_settings_of_the_wrong_type(settings: Any, key: str, value: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, key: value}
    wanted = SETTINGS_BY_NAME[key].check_id
    [message] = [m for m in check_settings() if m.id == wanted]
    assert key in message.msg and message.is_serious()


def test_w074_toolkit_settings_without_what_mcp_needs(settings: Any) -> None:
    settings.OAUTH2_PROVIDER = {
        **settings.OAUTH2_PROVIDER,
        "OAUTH2_VALIDATOR_CLASS": "oauth2_provider.oauth2_validators.OAuth2Validator",
        "COMPLIANT_BCP_RFC9700_PKCE_METHOD": False,
    }
    [message] = check_oauth_settings()
    assert message.id == "mcp_endpoint.W074"
    assert "OAUTH2_VALIDATOR_CLASS" in message.msg and "PKCE_METHOD" in message.msg
    assert message.hint is not None and "provider_settings" in message.hint


# -- a host without django-oauth-toolkit ---------------------------------------------------------

WITHOUT_OAUTH_REQUEST = """
import json
import django
django.setup()
from django.core.management import call_command
call_command("migrate", verbosity=0)
from django.contrib.auth import get_user_model
from django.test import Client
from mcp_endpoint.models import APIKey
from mcp_endpoint.oauth.models import RedeemedAuthorizationCode

user = get_user_model().objects.create_user("alice")
_, key = APIKey.objects.create_key(user=user, name="k", scopes="read")
message = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"})
client = Client(raise_request_exception=False)
for bearer in ("not-a-key-but-a-token", key):
    response = client.post(
        "/mcp", message, content_type="application/json", HTTP_AUTHORIZATION="Bearer " + bearer
    )
    print(json.dumps({"status": response.status_code, "body": response.json(),
                      "challenge": response.get("WWW-Authenticate", "")}))
print(json.dumps({"redeemed": RedeemedAuthorizationCode.objects.count()}))
"""


def run_without_oauth(*args: str, name_oauth: bool = False) -> subprocess.CompletedProcess[str]:
    """Run Python on the host without the toolkit. On the run's PostgreSQL the process gets
    an empty database of its own, dropped afterwards: the run's database is every test
    process's, and the script migrates and creates users straight into it."""
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings_toolkit_not_installed"}
    if name_oauth:
        env["NAME_OAUTH_CLASS"] = "1"
    origin = env.get("DATABASE_URL")
    if origin:
        env["DATABASE_URL"] = create_database(origin)
    try:
        return subprocess.run(
            [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
        )
    finally:
        if origin:
            drop_database(env["DATABASE_URL"], origin)


@pytest.mark.backends
def test_without_the_toolkit_a_token_is_refused_not_a_server_error() -> None:
    result = run_without_oauth("-c", WITHOUT_OAUTH_REQUEST)
    assert result.returncode == 0, result.stderr[-3000:]
    token, key, stored = (json.loads(line) for line in result.stdout.splitlines()[-3:])
    assert token["status"] == 401
    assert token["body"]["error"]["code"] == -32001
    assert token["challenge"].startswith('Bearer error="invalid_token"')
    assert key["status"] == 200 and key["body"]["result"] == {}
    assert stored == {"redeemed": 0}
