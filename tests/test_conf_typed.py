"""The settings table (``mcp_endpoint.conf.SETTINGS``): one check id per key, typed keyword
arguments of ``Endpoint``, the deprecated ``settings=`` dict, and the generated docs."""

from __future__ import annotations

import re
import types
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, get_type_hints

import pydantic
import pytest
from django.urls import path

from mcp_endpoint.checks import check_setting_values, check_settings
from mcp_endpoint.conf import (
    ARGUMENTS,
    DEFAULTS,
    IMPORT_STRINGS,
    PROCESS_KEYS,
    SETTINGS,
    SETTINGS_BY_NAME,
    Check,
    Choice,
    DottedPaths,
    EndpointOptions,
    Flag,
    Integer,
    MCPSettings,
    Number,
    Setting,
    SettingValues,
    Text,
    TextList,
    documented,
)
from mcp_endpoint.endpoint import Endpoint, endpoints
from tests.mcp_client import MCPClient

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "configuration.md"
PREFIX = "throwaway-typed"


def bad_value(setting: Setting) -> Any:
    """A value the setting's validator refuses."""
    validator = setting.validator
    if isinstance(validator, Flag):
        return "yes"
    if isinstance(validator, Integer | Number):
        return -1
    if isinstance(validator, Text):
        return 3
    if isinstance(validator, Choice):
        return "none of them"
    if isinstance(validator, TextList):
        return "one string, not a list"
    if isinstance(validator, DottedPaths):
        return ["no_such_module.NoSuchClass"]
    assert isinstance(validator, Check)
    return object()


@pytest.fixture
def made() -> Iterator[list[Endpoint]]:
    """Endpoints made by a test, gone from ``endpoints`` once it ends."""
    found: list[Endpoint] = []
    yield found
    # Out of the endpoints the checks walk at once, rather than by a collection per test.
    for endpoint in found:
        endpoints.discard(endpoint)
    found.clear()
    assert not [e for e in endpoints if e.name.startswith(PREFIX)]


def old_spelling(name: str, settings: dict[str, Any]) -> Endpoint:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return Endpoint(name, settings=settings)


# -- the table ------------------------------------------------------------------------------


def test_every_key_has_its_own_check_id() -> None:
    ids = [s.check_id for s in SETTINGS]
    assert len(ids) == len(set(ids))
    assert all(re.fullmatch(r"mcp_endpoint\.E\d{3}", i) for i in ids)


def test_the_defaults_are_derived_from_the_table_and_pass_their_checks() -> None:
    assert list(DEFAULTS) == [s.name for s in SETTINGS]
    assert check_setting_values("MCP_ENDPOINT", DEFAULTS) == []


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_refusal_has_the_keys_own_id(setting: Setting) -> None:
    messages = check_setting_values("MCP_ENDPOINT", {setting.name: bad_value(setting)})
    assert [m.id for m in messages] == [setting.check_id]
    assert messages[0].is_serious()
    assert f"MCP_ENDPOINT[{setting.name!r}]" in messages[0].msg


def test_the_process_keys_are_those_read_from_mcp_endpoint_alone() -> None:
    assert {"STREAM_POOL_SIZE", "TOOL_MIDDLEWARE", "API_KEY_PREFIX"} <= PROCESS_KEYS
    assert "OAUTH_ACCEPT_UNBOUND_TOKENS" in PROCESS_KEYS
    assert not {"MAX_BATCH_SIZE", "CACHE", "SCOPES_BY_METHOD"} & PROCESS_KEYS


def test_the_keyword_arguments_are_typed_for_every_endpoint_key() -> None:
    assert set(EndpointOptions.__annotations__) == set(ARGUMENTS)
    assert all(SETTINGS_BY_NAME[a.upper()].scope == "endpoint" for a in ARGUMENTS)


def test_every_key_is_typed_as_it_is_read() -> None:
    # What a read returns, for the type checker: an endpoint key as its keyword argument
    # is typed, a list of class paths as the classes it imports.
    hints = get_type_hints(SettingValues)
    assert set(hints) == set(DEFAULTS)
    for argument, hint in get_type_hints(EndpointOptions).items():
        if argument.upper() not in IMPORT_STRINGS:
            assert hints[argument.upper()] == hint, argument
    read = MCPSettings()
    for name, hint in hints.items():
        pydantic.TypeAdapter(hint).validate_python(getattr(read, name), strict=True)


# -- Endpoint(name, **options) --------------------------------------------------------------


def test_keyword_arguments_set_the_endpoints_values(made: list[Endpoint]) -> None:
    made.append(Endpoint(f"{PREFIX}-kw", server_name="typed", max_batch_size=10))
    settings = made[0].settings
    assert (settings.SERVER_NAME, settings.MAX_BATCH_SIZE) == ("typed", 10)
    assert DEFAULTS["MAX_REQUEST_BYTES"] == settings.MAX_REQUEST_BYTES


def test_a_misspelt_argument_names_the_closest_one() -> None:
    with pytest.raises(TypeError, match="'max_bach_size'; did you mean max_batch_size"):
        Endpoint(f"{PREFIX}-typo", max_bach_size=10)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="did you mean server_name"):
        Endpoint(f"{PREFIX}-upper", SERVER_NAME="x")  # type: ignore[call-arg]


@pytest.mark.parametrize(
    ("argument", "value", "check_id"),
    [
        ("max_batch_size", 0, "mcp_endpoint.E207"),
        ("streaming", "yes", "mcp_endpoint.E252"),
        ("tool_discovery", "sometimes", "mcp_endpoint.E220"),
        ("protocol_versions", ["2099-01-01"], "mcp_endpoint.E002"),
    ],
)
def test_a_bad_value_is_refused_at_construction(argument: str, value: Any, check_id: str) -> None:
    with pytest.raises(ValueError, match=re.escape(check_id)) as raised:
        Endpoint(f"{PREFIX}-bad", **{argument: value})
    assert argument in str(raised.value)
    assert not [e for e in endpoints if e.name == f"{PREFIX}-bad"]


@pytest.mark.parametrize("key", sorted(PROCESS_KEYS))
def test_a_process_key_is_not_an_argument(key: str) -> None:
    with pytest.raises(TypeError, match=rf'MCP_ENDPOINT\["{key}"\]'):
        Endpoint(f"{PREFIX}-process", **{key.lower(): DEFAULTS[key]})


def test_the_old_dict_warns_with_the_new_spelling(made: list[Endpoint]) -> None:
    with pytest.warns(DeprecationWarning, match=r"write Endpoint\('throwaway-typed-old', ") as w:
        made.append(Endpoint(f"{PREFIX}-old", settings={"MAX_BATCH_SIZE": 3, "LOGGING": True}))
    assert "max_batch_size=3, logging=True" in str(w[0].message)
    assert made[0].settings.MAX_BATCH_SIZE == 3


def test_a_process_key_in_the_old_dict_is_e015(made: list[Endpoint]) -> None:
    with pytest.warns(DeprecationWarning, match="Set STREAM_POOL_SIZE in MCP_ENDPOINT"):
        made.append(Endpoint(f"{PREFIX}-e015", settings={"STREAM_POOL_SIZE": 4}))
    [error] = [m for m in check_settings() if m.id == "mcp_endpoint.E015"]
    assert f"{PREFIX}-e015" in error.msg and "STREAM_POOL_SIZE" in error.msg
    assert error.hint == "Set it in MCP_ENDPOINT."


def test_a_process_key_in_mcp_endpoint_is_fine(settings: Any) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "STREAM_POOL_SIZE": 64}
    assert [m for m in check_settings() if m.id == "mcp_endpoint.E015"] == []


def test_both_spellings_serve_the_same(client: Any, alice_key: str, settings: Any) -> None:
    """max_batch_size given as an argument is honoured at the endpoint's URL as the old
    dict's MAX_BATCH_SIZE is."""
    typed = Endpoint(f"{PREFIX}-url-kw", max_batch_size=2)
    old = old_spelling(f"{PREFIX}-url-dict", {"MAX_BATCH_SIZE": 2})
    urls = types.ModuleType("typed_urls")
    urls.urlpatterns = [path("kw/mcp", typed.urls), path("dict/mcp", old.urls)]  # type: ignore[attr-defined]
    settings.ROOT_URLCONF = urls
    pings = [{"jsonrpc": "2.0", "id": i, "method": "ping"} for i in range(3)]
    answers = []
    for url in ("/kw/mcp", "/dict/mcp"):
        rpc = MCPClient(client, url, alice_key)
        over = rpc.post(pings)
        assert over.status_code == 400
        assert over.json()["error"]["data"] == {"max_batch_size": 2}
        within = rpc.post(pings[:2])
        assert within.status_code == 200 and len(within.json()) == 2
        answers.append((over.json(), within.json()))
    assert answers[0] == answers[1]
    endpoints.discard(typed)
    endpoints.discard(old)


# -- docs/configuration.md ------------------------------------------------------------------


def test_the_docs_table_is_the_settings_table() -> None:
    text = DOCS.read_text()
    assert documented(text) == text, "run: python -m mcp_endpoint.conf docs/configuration.md"


def test_every_check_id_is_documented() -> None:
    text = DOCS.read_text()
    source = "\n".join(p.read_text() for p in (ROOT / "mcp_endpoint").rglob("*.py"))
    ids = set(re.findall(r'id="mcp_endpoint\.([EW]\d{3})"', source))
    ids |= {s.check_id.removeprefix("mcp_endpoint.") for s in SETTINGS}
    missing = sorted(i for i in ids if i not in text)
    assert missing == []
