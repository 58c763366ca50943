"""How MCP clients get a client id: client ID metadata documents first, dynamic
registration beside them, and one toolkit setting (``DCR_ENABLED``) that turns it off."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from oauth2_provider.models import Application

from mcp_endpoint.oauth.checks import check_registration_ways
from tests.oauth_helpers import DocumentServer
from tests.test_oauth import (
    LOOPBACK_FETCHER,
    authorize_query,
    client_document,
    documents,  # noqa: F401 - a fixture
    pkce,
    register,
    signed_in,  # noqa: F401 - a fixture
    with_toolkit_settings,
)

pytestmark = pytest.mark.django_db

METADATA = "/.well-known/oauth-authorization-server/o"


def metadata(client: Client) -> dict[str, Any]:
    response = client.get(METADATA)
    assert response.status_code == 200
    data: dict[str, Any] = response.json()
    return data


def test_metadata_documents_are_advertised_first(client: Client) -> None:
    keys = list(metadata(client))
    assert keys[:3] == [
        "issuer",
        "client_id_metadata_document_supported",
        "registration_endpoint",
    ]
    assert metadata(client)["client_id_metadata_document_supported"] is True


def test_dynamic_registration_turned_off(client: Client) -> None:
    with with_toolkit_settings(DCR_ENABLED=False):
        data = metadata(client)
        assert "registration_endpoint" not in data
        assert data["client_id_metadata_document_supported"] is True
        assert register(client).status_code == 404
        assert check_registration_ways() == []
    assert not Application.objects.exists()


def test_metadata_documents_still_work_with_registration_off(
    signed_in: Client,  # noqa: F811
    documents: DocumentServer,  # noqa: F811
) -> None:
    client_id = documents.url("/client.json")
    documents.serve_json("/client.json", client_document(client_id))
    _, challenge = pkce()
    with with_toolkit_settings(DCR_ENABLED=False, **LOOPBACK_FETCHER):
        page = signed_in.get(authorize_query(client_id, challenge))
    assert page.status_code == 200
    assert Application.objects.get().registration_source == Application.RegistrationSource.CIMD


def test_w142_no_way_left_to_register() -> None:
    with with_toolkit_settings(DCR_ENABLED=False, CIMD_ENABLED=False):
        (warning,) = check_registration_ways()
    assert warning.id == "mcp_endpoint.W142"
