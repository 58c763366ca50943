"""E016 and E070 with a catch-all route: a check resolves the endpoint's own path and its
metadata URL, and names the pattern that answers them instead."""

from __future__ import annotations

import pytest
from django.test import Client

from mcp_endpoint.checks import check_endpoint_reachable
from mcp_endpoint.oauth.checks import check_metadata_mounted
from tests.hosts.paperwork.urls import endpoint


@pytest.mark.backends
@pytest.mark.urls("tests.hosts.paperwork.urls_swallowed")
def test_a_catch_all_before_the_endpoint_is_named(client: Client) -> None:
    # What a client meets: the product's page where the endpoint should answer.
    answer = client.post("/mcp", data={}, content_type="application/json")
    assert answer.content.startswith(b"<html>")
    [message] = check_endpoint_reachable(endpoint)
    assert message.id == "mcp_endpoint.E016"
    assert "'.*'" in message.msg and "tests.hosts.paperwork.urls.index" in message.msg
    assert "before '.*'" in message.hint


@pytest.mark.urls("tests.hosts.paperwork.urls_swallowed")
def test_a_catch_all_before_the_metadata_is_named() -> None:
    [message] = check_metadata_mounted(endpoint)
    assert message.id == "mcp_endpoint.E070"
    assert "the URL pattern '.*' answers it" in message.msg
    assert "catch-all" in message.hint


@pytest.mark.urls("tests.hosts.paperwork.urls")
def test_a_catch_all_after_the_endpoint_is_fine() -> None:
    assert check_endpoint_reachable(endpoint) == []


@pytest.mark.django_db
@pytest.mark.urls("tests.hosts.paperwork.urls_swallowed")
def test_the_doctor_names_the_catch_all_that_answers_the_endpoints_path() -> None:
    from mcp_endpoint.doctor import DjangoClientHTTP, Doctor

    findings = Doctor(DjangoClientHTTP(), "http://testserver/mcp").run()
    [finding] = [f for f in findings if f.id == "mcp_doctor.E003"]
    assert "the pattern '.*', view tests.hosts.paperwork.urls.index, answers /mcp" in (
        finding.message
    )
    assert "catch-all" in finding.hint
