"""The server card at ``<endpoint>/server-card``: off unless ``SERVER_CARD`` says so,
public and readable from any origin when on, and read by ``mcp_doctor``."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from mcp_endpoint import server_card, site
from mcp_endpoint.checks import check_setting_values
from mcp_endpoint.doctor import DjangoClientHTTP, Doctor

pytestmark = pytest.mark.django_db

CARD = "/mcp/server-card"


@pytest.fixture
def card_on(settings: Any) -> None:
    settings.MCP_ENDPOINT = {
        **settings.MCP_ENDPOINT,
        "SERVER_CARD": {"name": "com.example/tracker", "websiteUrl": "https://example.com"},
    }


def test_off_by_default(client: Client) -> None:
    response = client.get(CARD)
    assert response.status_code == 404
    assert response["Access-Control-Allow-Origin"] == "*"


def test_on_it_describes_the_endpoint(client: Client, card_on: None) -> None:
    response = client.get(CARD, headers={"Origin": "https://elsewhere.example"})
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    assert response["Access-Control-Allow-Origin"] == "*"
    assert response["Cache-Control"] == "public, max-age=3600"
    card = response.json()
    assert card["$schema"] == server_card.SCHEMA
    assert card["name"] == "com.example/tracker"
    assert card["websiteUrl"] == "https://example.com"
    assert card["version"] == site.settings.SERVER_VERSION
    (remote,) = card["remotes"]
    assert remote["type"] == "streamable-http"
    assert remote["url"] == "http://testserver/mcp"
    assert remote["supportedProtocolVersions"] == list(site.features.supported_versions())
    assert remote["authentication"] == {"required": True, "schemes": ["bearer", "oauth2"]}
    assert card["capabilities"]["extensions"]["io.modelcontextprotocol/skills"]
    # Public: nothing that depends on who asks.
    assert not {"tools", "resources", "prompts"} & set(card)


def test_it_answers_only_reads(client: Client, card_on: None) -> None:
    assert client.post(CARD).status_code == 405
    assert client.options(CARD).status_code == 204


@pytest.mark.parametrize(
    "value", [1, "yes", {"name": "no-slash"}, {"tools": []}, {"name": "a/b/c"}]
)
def test_e142_a_card_setting_that_is_not_one(value: Any) -> None:
    (error,) = check_setting_values("card", {"SERVER_CARD": value})
    assert error.id == "mcp_endpoint.E142"


@pytest.mark.parametrize("value", [True, False, {"name": "com.example/x", "description": "d"}])
def test_settings_that_pass(value: Any) -> None:
    assert check_setting_values("card", {"SERVER_CARD": value}) == []


def doctor_run(url: str = "http://testserver/mcp") -> Doctor:
    doctor = Doctor(DjangoClientHTTP(), url)
    server_card.read_card(doctor)
    return doctor


def test_the_doctor_reads_it(card_on: None) -> None:
    doctor = doctor_run()
    assert doctor.findings == []
    assert f"server card: com.example/tracker {site.settings.SERVER_VERSION}" in doctor.passed


def test_the_doctor_finds_a_card_off_fine() -> None:
    doctor = doctor_run()
    assert doctor.findings == [] and "server card: off" in doctor.passed


def test_the_doctor_warns_of_a_card_that_names_another_url(settings: Any, card_on: None) -> None:
    settings.MCP_ENDPOINT = {**settings.MCP_ENDPOINT, "RESOURCE_URL": "https://other.example/mcp"}
    (finding,) = doctor_run().findings
    assert finding.id == "mcp_doctor.W140"
