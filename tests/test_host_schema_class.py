"""A host whose ``DEFAULT_SCHEMA_CLASS`` is DRF's own OpenAPI generator, not drf-spectacular's:
the tools still get their schemas from drf-spectacular, and calls agree with REST."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client, RequestFactory, override_settings

from mcp_endpoint.authentication import authenticate, drf_request
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.protocol.server import RequestContext
from tests.hosts.parity import api_key, call_rest
from tests.hosts.tutorial.models import Snippet
from tests.hosts.tutorial.views import SnippetViewSet

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.hosts.tutorial.urls")]


@pytest.fixture
def drf_schema_class(settings: Any) -> None:
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_SCHEMA_CLASS": "rest_framework.schemas.openapi.AutoSchema",
    }


def test_schemas_come_from_drf_spectacular(drf_schema_class: None, client: Client) -> None:
    from rest_framework.schemas.openapi import AutoSchema as DRFAutoSchema

    assert isinstance(SnippetViewSet().schema, DRFAutoSchema)
    endpoint = Endpoint("plain-schema")
    try:
        endpoint.register_viewset(SnippetViewSet, basename="snippet", prefix="snippets")
        assert [m.id for m in endpoint.check() if m.is_serious()] == []
        tools = {t.name: t for t in endpoint.tools}
        create = tools["create_snippet"].input_schema
        assert create["required"] == ["code"]
        assert create["properties"]["language"]["enum"] == ["python", "ruby", "text"]
        listed = tools["list_snippets"].output_schema
        assert listed is not None and "results" in listed["properties"]

        owner = get_user_model().objects.create_user("olive", "o@example.com", "pw-olive-1")
        Snippet.objects.create(title="hello", code="print(1)", owner=owner)
        key = api_key(owner, "read").bearer
        request = RequestFactory().post("/mcp", HTTP_AUTHORIZATION=f"Bearer {key}")
        credential = authenticate(drf_request(request, endpoint.settings.AUTHENTICATION_CLASSES))
        context = RequestContext(credential=credential, transport=request)
        with override_settings(ALLOWED_HOSTS=["testserver"]):
            result = endpoint.features.call_tool("list_snippets", {}, context)
        rest = call_rest(client, key, "GET", "/snippets/", {})
        assert result["isError"] is False
        assert result["structuredContent"] == rest.json()
    finally:
        endpoints.discard(endpoint)
