"""Every host app's URLs at once, each under ``hosts/<name>/``: the URL conf of
``tests/hosts/settings.py``, for commands that must see every host's endpoints."""

from __future__ import annotations

from django.urls import URLPattern, URLResolver, include, path

from project.urls import urlpatterns as demo_urlpatterns
from tests.hosts import host_names

urlpatterns: list[URLPattern | URLResolver] = [*demo_urlpatterns]
for name in host_names():
    urlpatterns.append(path(f"hosts/{name}/", include(f"tests.hosts.{name}.urls")))
