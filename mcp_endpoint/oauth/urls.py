"""URLs a host mounts at its root, before django-oauth-toolkit's own include::

    urlpatterns = [
        path("", include("mcp_endpoint.oauth.urls")),
        path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
        path("mcp", mcp_endpoint.site.urls),
    ]

They serve the metadata documents at the well-known URLs clients try, and the endpoints
clients call (authorise, token, register, revoke, introspect, device authorisation) with and
without the final slash, without a redirect: a client does not repeat a POST through a 301.
The toolkit's
include keeps its URL names, so ``reverse("oauth2_provider:token")`` and the metadata it
publishes still work; the paths here come first and answer the same URLs.

A host that mounts the toolkit elsewhere than ``o/`` uses :func:`oauth_urlpatterns`.
"""

from __future__ import annotations

import re

from django.urls import URLPattern, re_path

from mcp_endpoint.oauth.metadata import (
    AuthorizationServerMetadataView,
    ProtectedResourceMetadataView,
)
from mcp_endpoint.oauth.registration import RegistrationManagementView, RegistrationView
from mcp_endpoint.oauth.views import (
    AuthorizationView,
    AuthorizedTokenDeleteView,
    AuthorizedTokensListView,
    DeviceAuthorizationView,
    IntrospectTokenView,
    RevokeTokenView,
    TokenView,
)

app_name = "mcp_oauth"


def oauth_urlpatterns(prefix: str = "o/") -> list[URLPattern]:
    """The well-known documents at the root, and the toolkit's endpoints under ``prefix``."""
    at = "^" + re.escape(prefix.strip("/") + "/") if prefix.strip("/") else "^"
    server_metadata = AuthorizationServerMetadataView.as_view()
    resource_metadata = ProtectedResourceMetadataView.as_view()
    return [
        re_path(
            r"^\.well-known/oauth-authorization-server(?:/(?P<issuer_path>.+?))?/?\Z",
            server_metadata,
            name="authorization-server-metadata",
        ),
        re_path(
            r"^\.well-known/oauth-protected-resource(?:/(?P<resource_path>.+?))?/?\Z",
            resource_metadata,
            name="protected-resource-metadata",
        ),
        # The toolkit also serves both documents under its own prefix; its resource
        # document there would describe "<base>/o", not the MCP endpoint.
        re_path(at + r"\.well-known/oauth-authorization-server/?\Z", server_metadata),
        re_path(at + r"\.well-known/oauth-protected-resource/?\Z", resource_metadata),
        re_path(at + r"authorize/?\Z", AuthorizationView.as_view(), name="authorize"),
        re_path(at + r"token/?\Z", TokenView.as_view(), name="token"),
        re_path(at + r"revoke_token/?\Z", RevokeTokenView.as_view(), name="revoke-token"),
        re_path(at + r"introspect/?\Z", IntrospectTokenView.as_view(), name="introspect"),
        re_path(
            at + r"device-authorization/?\Z",
            DeviceAuthorizationView.as_view(),
            name="device-authorization",
        ),
        re_path(at + r"register/?\Z", RegistrationView.as_view(), name="register"),
        re_path(
            at + r"register/(?P<client_id>[^/]+)/?\Z",
            RegistrationManagementView.as_view(),
            name="register-management",
        ),
        # The user's connected clients, on the package's templates and not frameable.
        re_path(
            at + r"authorized_tokens/\Z",
            AuthorizedTokensListView.as_view(),
            name="authorized-token-list",
        ),
        re_path(
            at + r"authorized_tokens/(?P<pk>[\w-]+)/delete/\Z",
            AuthorizedTokenDeleteView.as_view(),
            name="authorized-token-delete",
        ),
    ]


urlpatterns = oauth_urlpatterns()
