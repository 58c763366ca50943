"""A URLconf for the view's policy attributes: the tests' endpoint behind views that set
their own, beside the host's URLs. Use it with ``@pytest.mark.urls("tests.urls_view_policies")``."""

from __future__ import annotations

from django.urls import path

from mcp_endpoint.views import MCPView
from tests.urls_testing import test_endpoint
from tests.urls_testing import urlpatterns as testing_urlpatterns


class PartnerView(MCPView):
    """A host's view for one partner's browser client: its origin only, no credential."""

    allowed_origins = ["https://partner.example.com"]
    require_credential = False


urlpatterns = [
    *testing_urlpatterns,
    path("partner-mcp", PartnerView.as_view(endpoint=test_endpoint)),
    path("local-mcp", MCPView.as_view(endpoint=test_endpoint, loopback_only=True)),
]
