"""Small host apps, one per shape of real DRF product the adapter must serve.

Each package here is a Django app (``tests.hosts.<name>``) with its own models, REST API and
MCP endpoint, the way a product nobody here wrote would have them. ``tests/settings.py``
installs every package found in this folder and ``tests/urls.py`` mounts each one's
``urls`` module, so a new host needs no registration anywhere else, and the suite-wide
tests (the metaschema, ``check`` and ``migrate`` on an empty database) pick it up.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module
from pathlib import Path
from typing import Any


def host_names() -> list[str]:
    """The host packages in this folder, by name, in a stable order."""
    return sorted(
        module.name for module in pkgutil.iter_modules([str(Path(__file__).parent)]) if module.ispkg
    )


def host_apps() -> list[str]:
    """The dotted paths of the host apps, for ``INSTALLED_APPS``."""
    return [f"tests.hosts.{name}" for name in host_names()]


def host_endpoints() -> dict[str, list[Any]]:
    """Each host's MCP endpoints (those its ``urls`` module makes), by host name."""
    from mcp_endpoint.endpoint import Endpoint

    found: dict[str, list[Any]] = {}
    for name in host_names():
        urls = import_module(f"tests.hosts.{name}.urls")
        found[name] = [v for v in vars(urls).values() if isinstance(v, Endpoint)]
    return found
