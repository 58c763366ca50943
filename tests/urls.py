"""The suite's URL conf: the demo host's URLs, then each host app's (``tests/hosts/``)."""

from __future__ import annotations

from importlib import import_module

from django.urls import URLPattern, URLResolver

from project.urls import urlpatterns as host_urlpatterns
from tests.hosts import host_apps

urlpatterns: list[URLPattern | URLResolver] = [*host_urlpatterns]
for app in host_apps():
    urlpatterns += import_module(f"{app}.urls").urlpatterns
