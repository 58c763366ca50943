"""Property-based tests: whatever arrives at the OAuth endpoints, no 5xx.

Generated form fields, JSON bodies, query strings and headers go to every URL
``mcp_endpoint.oauth.urls`` mounts and to the toolkit's own, through Django's test client with
``raise_request_exception=False``: a 500 is an answer here, and a failure. NUL characters
break PostgreSQL only, so the module runs on both databases (``DATABASE_URL``).

Bounded and derandomised in the suite (``FUZZ_EXAMPLES``, 20 by default); ``./dev fuzz``
runs it at length with fresh randomness.
"""

from __future__ import annotations

import base64
import json
import logging
from typing import Any
from urllib.parse import urlencode

import pytest
from django.test import Client
from hypothesis import example, given
from hypothesis import strategies as st
from oauth2_provider.models import get_application_model

from tests.test_fuzz import FUZZ, JSON_VALUES, LogWatch, log_watch

pytestmark = pytest.mark.django_db
__all__ = ["log_watch"]  # a fixture, used by name

Application = get_application_model()
CLIENT_ID = "fuzz-client"
REDIRECT = "http://127.0.0.1:33418/callback"

GRANT_TYPES = [
    "authorization_code",
    "refresh_token",
    "client_credentials",
    "password",
    "implicit",
    "urn:ietf:params:oauth:grant-type:device_code",
    "urn:ietf:params:oauth:grant-type:jwt-bearer",
]
# Text a hostile client sends: NUL, a lone surrogate (JSON only: a form cannot carry one),
# controls, a long run, digits that are not ASCII, and plain values.
HOSTILE_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(
        ["\x00", "a\x00b", "\u00b9", "x" * 5000, "%00", " ", "\n", "null", "0", "-1", "S256"]
    ),
    st.sampled_from([CLIENT_ID, REDIRECT, "read", "read write", *GRANT_TYPES]),
)
JSON_TEXT = st.one_of(HOSTILE_TEXT, st.sampled_from(["\ud800", "a\udfffb"]))
FORM_NAMES = [
    "grant_type",
    "code",
    "redirect_uri",
    "client_id",
    "client_secret",
    "code_verifier",
    "refresh_token",
    "scope",
    "resource",
    "token",
    "token_type_hint",
    "device_code",
    "response_type",
    "state",
    "code_challenge",
    "code_challenge_method",
    "username",
    "password",
    "allow",
    "nonce",
    "prompt",
    "user_code",
]
FIELDS = st.dictionaries(
    st.one_of(st.sampled_from(FORM_NAMES), st.text(max_size=8)), HOSTILE_TEXT, max_size=8
)
# Half the forms name a grant type, so the token endpoint goes past its first question.
FORMS = st.one_of(
    FIELDS,
    st.builds(
        lambda grant, fields: {**fields, "grant_type": grant}, st.sampled_from(GRANT_TYPES), FIELDS
    ),
)


def basic(text: str) -> str:
    return "Basic " + base64.b64encode(text.encode("utf-8", "surrogatepass")).decode()


HEADERS = st.fixed_dictionaries(
    {},
    optional={
        "Authorization": st.one_of(
            st.builds(basic, HOSTILE_TEXT),
            st.builds(lambda a, b: basic(f"{a}:{b}"), HOSTILE_TEXT, HOSTILE_TEXT),
            HOSTILE_TEXT.map(lambda t: "Bearer " + t.replace("\n", "")),
            st.sampled_from(["Basic", "Basic !!!", "Bearer", "Basic " + "A" * 4001]),
        ).filter(lambda value: value.isprintable() and value.isascii()),
        "Origin": st.sampled_from(["http://evil.example", "null", "http://127.0.0.1:6274"]),
        "Accept": st.sampled_from(["application/json", "text/html", "*/*", "x"]),
    },
)
# Every endpoint of the app's OAuth URLs, with and without the final slash, and the
# toolkit's own under its prefix.
FORM_PATHS = [
    "/o/token/",
    "/o/token",
    "/o/revoke_token/",
    "/o/introspect/",
    "/o/authorize/",
    "/o/device-authorization/",
    "/o/device-authorization",
    "/o/device/",
]
QUERY_PATHS = [
    "/o/authorize/",
    "/o/authorize",
    "/o/introspect/",
    "/o/authorized_tokens/",
    "/.well-known/oauth-authorization-server",
    "/.well-known/oauth-authorization-server/o",
    "/.well-known/oauth-protected-resource",
    "/.well-known/oauth-protected-resource/mcp",
    "/o/.well-known/oauth-authorization-server",
    "/o/.well-known/oauth-protected-resource",
    "/o/register/",
    f"/o/register/{CLIENT_ID}/",
]
REGISTRATION_FIELDS = [
    "client_name",
    "redirect_uris",
    "grant_types",
    "response_types",
    "token_endpoint_auth_method",
    "application_type",
    "scope",
    "client_uri",
    "logo_uri",
    "contacts",
    "software_id",
]
METADATA_FIELDS = st.dictionaries(
    st.one_of(st.sampled_from(REGISTRATION_FIELDS), st.text(max_size=8)),
    st.one_of(
        JSON_TEXT,
        st.lists(JSON_TEXT, max_size=3),
        st.just([REDIRECT]),
        st.lists(st.sampled_from(GRANT_TYPES), max_size=2),
        JSON_VALUES,
    ),
    max_size=6,
)
# Half the bodies are a registration that passes every policy but for what was drawn.
METADATA = st.one_of(
    METADATA_FIELDS,
    st.builds(
        lambda fields: {
            "redirect_uris": [REDIRECT],
            "token_endpoint_auth_method": "none",
            **fields,
        },
        METADATA_FIELDS,
    ),
)


@pytest.fixture
def oauth_client(settings: Any, alice: Any, log_watch: LogWatch) -> Client:
    # Registrations are throttled per address; the properties would meet the 429 only.
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "OAUTH_REGISTRATION_RATE": None}
    Application.objects.create(
        name="Fuzzed",
        client_id=CLIENT_ID,
        client_type=Application.CLIENT_PUBLIC,
        authorization_grant_type=Application.GRANT_AUTHORIZATION_CODE,
        redirect_uris=REDIRECT,
        registration_source=Application.RegistrationSource.DCR,
    )
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    return client


def assert_no_5xx(response: Any, watch: LogWatch, what: Any) -> None:
    assert response.status_code < 500, (what, response.status_code, response.content[:300])
    # Django logs the 400 of a body it cannot parse with its traceback, as a warning.
    errors = [r.getMessage() for r in watch.bad if r.levelno >= logging.ERROR]
    watch.bad.clear()
    assert not errors, (what, errors)


@FUZZ
@given(
    path=st.sampled_from(FORM_PATHS),
    form=FORMS,
    headers=HEADERS,
    signed_in=st.booleans(),
    urlencoded=st.booleans(),
)
# Found by adversarial runs, kept as examples every run tries first.
@example(
    path="/o/token/",
    form={"grant_type": "urn:ietf:params:oauth:grant-type:device_code"},
    headers={},
    signed_in=False,
    urlencoded=False,
)
@example(
    path="/o/token/",
    form={"grant_type": "refresh_token", "refresh_token": "\x00"},
    headers={},
    signed_in=False,
    urlencoded=False,
)
@example(
    path="/o/device-authorization/",
    form={"client_id": "\x00"},
    headers={},
    signed_in=False,
    urlencoded=True,
)
def test_form_posts(
    oauth_client: Client,
    log_watch: LogWatch,
    path: str,
    form: Any,
    headers: Any,
    signed_in: bool,
    urlencoded: bool,
) -> None:
    client = oauth_client if signed_in else Client(raise_request_exception=False)
    if urlencoded:  # as OAuth clients send it; the test client's default is multipart
        response = client.post(
            path, urlencode(form), content_type="application/x-www-form-urlencoded", headers=headers
        )
    else:
        response = client.post(path, form, headers=headers)
    assert_no_5xx(response, log_watch, (path, form, headers, urlencoded))


@FUZZ
@given(
    path=st.sampled_from(QUERY_PATHS),
    query=FORMS,
    headers=HEADERS,
    method=st.sampled_from(["get", "head", "options", "delete"]),
)
def test_queries(
    oauth_client: Client, log_watch: LogWatch, path: str, query: Any, headers: Any, method: str
) -> None:
    response = getattr(oauth_client, method)(path, query, headers=headers)
    assert_no_5xx(response, log_watch, (method, path, query, headers))


@FUZZ
@given(
    path=st.sampled_from(["/o/register/", "/o/register", f"/o/register/{CLIENT_ID}/"]),
    body=st.one_of(METADATA, JSON_VALUES),
    method=st.sampled_from(["post", "put"]),
    headers=HEADERS,
)
@example(
    path="/o/register/",
    body={"client_name": "\ud800", "redirect_uris": [REDIRECT]},
    method="post",
    headers={},
)
@example(
    path="/o/register/",
    body={"client_name": "\x00", "redirect_uris": [REDIRECT]},
    method="post",
    headers={},
)
def test_registration_bodies(
    oauth_client: Client, log_watch: LogWatch, path: str, body: Any, method: str, headers: Any
) -> None:
    data = json.dumps(body)  # ensure_ascii: a lone surrogate travels as its escape
    response = getattr(Client(raise_request_exception=False), method)(
        path, data, content_type="application/json", headers=headers
    )
    assert_no_5xx(response, log_watch, (method, path, body, headers))


@FUZZ
@given(
    path=st.sampled_from([*FORM_PATHS, "/o/register/"]),
    body=st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode)),
    content_type=st.sampled_from(
        [
            "application/x-www-form-urlencoded",
            "application/json",
            "multipart/form-data",
            "multipart/form-data; boundary=x",
            "text/plain",
        ]
    ),
)
def test_raw_bodies(
    oauth_client: Client, log_watch: LogWatch, path: str, body: bytes, content_type: str
) -> None:
    response = Client(raise_request_exception=False).post(
        path, data=body, content_type=content_type
    )
    assert_no_5xx(response, log_watch, (path, body, content_type))
