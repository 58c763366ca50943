"""URLs of the account pages; a host includes them under its own account URLs::

path("account/ai/", include("mcp_endpoint.account.urls")),
"""

from __future__ import annotations

from django.urls import path

from mcp_endpoint.account import views

app_name = "mcp_account"

urlpatterns = [
    path("", views.ConnectView.as_view(), name="connect"),
    path("keys/", views.KeyListView.as_view(), name="keys"),
    path("keys/<str:pk>/created/", views.KeyCreatedView.as_view(), name="key-created"),
    path("keys/<str:pk>/revoke/", views.KeyRevokeView.as_view(), name="key-revoke"),
    path("apps/", views.ConnectedAppsView.as_view(), name="apps"),
    path("apps/<str:pk>/revoke/", views.AppRevokeView.as_view(), name="app-revoke"),
]
