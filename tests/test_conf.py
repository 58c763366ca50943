"""The MCP_ENDPOINT settings object: defaults, overrides, dotted paths, reload."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest
from django.test import override_settings
from django.utils.module_loading import import_string
from rest_framework.authentication import SessionAuthentication
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle

from mcp_endpoint import site
from mcp_endpoint.authentication import APIKeyAuthentication, OAuth2TokenAuthentication
from mcp_endpoint.conf import DEFAULTS, IMPORT_STRINGS, MCPSettings, endpoint_settings, mcp_settings
from mcp_endpoint.endpoint import Endpoint
from mcp_endpoint.protocol.versions import ALL_VERSIONS

# A dotted path whose import waits until the test says so: a setting read on one thread
# held halfway while another thread changes the settings.
reading_halfway = threading.Event()
go_on_reading = threading.Event()


def __getattr__(name: str) -> Any:
    if name == "ThrottleReadHalfway":
        reading_halfway.set()
        go_on_reading.wait(10)
        return AnonRateThrottle
    raise AttributeError(name)


@pytest.fixture
def no_user_settings(settings: Any) -> None:
    del settings.MCP_ENDPOINT


def test_documented_defaults(no_user_settings: None) -> None:
    conf = endpoint_settings(None)
    assert list(ALL_VERSIONS) == conf.PROTOCOL_VERSIONS
    assert conf.MAX_REQUEST_BYTES == 1024 * 1024
    assert conf.ALLOWED_ORIGINS == [
        "https://claude.ai",
        "https://claude.com",
        "https://chatgpt.com",
        "https://chat.openai.com",
        "https://platform.openai.com",
    ]
    assert conf.REQUIRE_CREDENTIAL is True
    assert conf.THROTTLE_CLASSES is None
    assert conf.SCOPES is None
    assert conf.SHOW_ALL_TOOLS is False
    assert conf.LIST_PAGE_SIZE == 100
    assert conf.TEXT_BUDGET_BYTES == 24_000
    assert isinstance(conf.TTL_MS, int) and conf.TTL_MS >= 0
    assert conf.SERVER_NAME == "mcp-endpoint"


def test_every_default_is_readable(no_user_settings: None) -> None:
    conf = endpoint_settings(None)
    for key, default in DEFAULTS.items():
        value = getattr(conf, key)
        if key in IMPORT_STRINGS and default is not None:
            assert value == [import_string(d) for d in default]
        else:
            assert value == default, key


def test_default_authentication_classes_are_imported(no_user_settings: None) -> None:
    assert [
        APIKeyAuthentication,
        OAuth2TokenAuthentication,
    ] == endpoint_settings(None).AUTHENTICATION_CLASSES


def test_dotted_paths_and_classes_both_work() -> None:
    conf = MCPSettings(
        {
            "AUTHENTICATION_CLASSES": [
                "rest_framework.authentication.SessionAuthentication",
                APIKeyAuthentication,
            ],
            "THROTTLE_CLASSES": ["rest_framework.throttling.AnonRateThrottle"],
        }
    )
    assert [SessionAuthentication, APIKeyAuthentication] == conf.AUTHENTICATION_CLASSES
    assert [AnonRateThrottle] == conf.THROTTLE_CLASSES


def test_unimportable_class_fails_on_use() -> None:
    conf = MCPSettings({"THROTTLE_CLASSES": ["no_such_module.Throttle"]})
    with pytest.raises(ImportError):
        conf.THROTTLE_CLASSES  # noqa: B018


def test_the_host_settings_dict_is_read() -> None:
    # project/settings.py sets these.
    assert mcp_settings.SERVER_NAME == "task-tracker"
    assert mcp_settings.SERVER_TITLE == "Task tracker"
    assert mcp_settings.INSTRUCTIONS_TEMPLATE == "tracker/mcp_instructions.txt"
    assert site.settings.SERVER_NAME == "task-tracker"
    # ...and leave the rest at their defaults.
    assert DEFAULTS["LIST_PAGE_SIZE"] == mcp_settings.LIST_PAGE_SIZE


def test_endpoint_overrides_win_over_the_settings_dict() -> None:
    conf = endpoint_settings({"SERVER_NAME": "fixture", "LIST_PAGE_SIZE": 3})
    assert conf.SERVER_NAME == "fixture"
    assert conf.LIST_PAGE_SIZE == 3
    # Keys it does not override still come from MCP_ENDPOINT.
    assert conf.SERVER_TITLE == "Task tracker"
    assert conf.overrides == {"SERVER_NAME": "fixture", "LIST_PAGE_SIZE": 3}


def test_unknown_setting_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NO_SUCH_SETTING"):
        mcp_settings.NO_SUCH_SETTING  # noqa: B018
    assert not hasattr(mcp_settings, "server_name")


def test_values_are_cached_until_reload(settings: Any) -> None:
    conf = MCPSettings()
    assert conf.SERVER_NAME == "task-tracker"
    # A plain MCPSettings is not registered for setting_changed: it keeps its cached value
    # until told to reload.
    settings.MCP_ENDPOINT = {"SERVER_NAME": "changed"}
    assert conf.SERVER_NAME == "task-tracker"
    conf.reload()
    assert conf.SERVER_NAME == "changed"


def test_a_value_read_across_a_reload_is_not_kept(settings: Any) -> None:
    # A request thread reading a setting while the settings change (a test's override
    # ending, say) gets what it read, and the next read gets the new value, not that one.
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "THROTTLE_CLASSES": ["tests.test_conf.ThrottleReadHalfway"],
    }
    conf = endpoint_settings(None)
    read: list[Any] = []
    reader = threading.Thread(target=lambda: read.append(conf.THROTTLE_CLASSES))
    reader.start()
    try:
        assert reading_halfway.wait(10)
        settings.MCP_ENDPOINT = {
            **settings.MCP_ENDPOINT,
            "THROTTLE_CLASSES": ["rest_framework.throttling.UserRateThrottle"],
        }
    finally:
        go_on_reading.set()
        reader.join(10)
    assert read == [[AnonRateThrottle]]
    assert [UserRateThrottle] == conf.THROTTLE_CLASSES


def test_reload_on_setting_changed() -> None:
    endpoint_conf = endpoint_settings({"SERVER_TITLE": "Mine"})
    assert mcp_settings.LIST_PAGE_SIZE == 100
    assert site.settings.LIST_PAGE_SIZE == 100
    assert endpoint_conf.LIST_PAGE_SIZE == 100
    with override_settings(MCP_ENDPOINT={"LIST_PAGE_SIZE": 7, "SERVER_TITLE": "Theirs"}):
        assert mcp_settings.LIST_PAGE_SIZE == 7
        assert site.settings.LIST_PAGE_SIZE == 7
        assert endpoint_conf.LIST_PAGE_SIZE == 7
        # Overrides still win after a reload.
        assert endpoint_conf.SERVER_TITLE == "Mine"
        assert mcp_settings.SERVER_TITLE == "Theirs"
    assert mcp_settings.LIST_PAGE_SIZE == 100
    assert site.settings.LIST_PAGE_SIZE == 100
    assert mcp_settings.SERVER_TITLE == "Task tracker"


def test_reload_with_the_settings_fixture(settings: Any) -> None:
    assert DEFAULTS["TEXT_BUDGET_BYTES"] == mcp_settings.TEXT_BUDGET_BYTES
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "TEXT_BUDGET_BYTES": 10}
    assert mcp_settings.TEXT_BUDGET_BYTES == 10
    assert site.settings.TEXT_BUDGET_BYTES == 10


def test_reload_when_the_rest_framework_settings_change(settings: Any) -> None:
    conf = endpoint_settings({})
    conf.AUTHENTICATION_CLASSES  # noqa: B018  (fill the cache)
    assert "AUTHENTICATION_CLASSES" in conf._cache
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK}
    assert conf._cache == {}


def test_no_reload_for_unrelated_settings(settings: Any) -> None:
    conf = endpoint_settings({})
    conf.SERVER_NAME  # noqa: B018
    settings.USE_THOUSAND_SEPARATOR = True
    assert "SERVER_NAME" in conf._cache


def test_endpoint_settings_are_released_with_their_endpoint() -> None:
    from mcp_endpoint.conf import _instances

    endpoint = Endpoint("throwaway-conf", server_name="gone")
    conf = weakref.ref(endpoint.settings)
    assert conf() in _instances
    del endpoint
    gc.collect()
    assert conf() is None


def test_endpoint_settings_drive_what_clients_see() -> None:
    endpoint = Endpoint(
        "throwaway-conf",
        server_name="custom",
        server_version="9.9",
        server_title="",
        instructions="  Be kind.  ",
        protocol_versions=["2025-06-18"],
        list_page_size=2,
        ttl_ms=5,
    )
    try:
        assert endpoint.features.server_info() == {"name": "custom", "version": "9.9"}
        assert endpoint.features.instructions() == "Be kind."
        assert list(endpoint.features.supported_versions()) == ["2025-06-18"]
        assert endpoint.features.page_size() == 2
        assert endpoint.features.ttl_ms() == 5
    finally:
        del endpoint
        gc.collect()
