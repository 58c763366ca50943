"""Small host apps, one per shape of real DRF product the adapter must serve.

Each package here is a host (``tests.hosts.<name>``) with its own REST API and MCP endpoint
in its ``urls`` module (the REST API at the root, the endpoint at ``mcp``), and often its
own models, the way a product nobody here wrote would have them. A test selects a host
with ``@pytest.mark.urls("tests.hosts.<name>.urls")``. ``tests/settings.py`` installs every
package found here, and ``tests/hosts/settings.py`` mounts them all at once, so a new host
needs no registration anywhere else, and the suite-wide tests (the metaschema, ``check``
and ``migrate`` on an empty database) pick it up.
"""

from __future__ import annotations

import pkgutil
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint


def host_names() -> list[str]:
    """The host packages in this folder that share the suite's settings, by name, in a
    stable order. A host with a ``settings`` module of its own (one that swaps the user
    model, say) runs in a process of its own instead: installed beside the others, its
    models would clash with theirs."""
    here = Path(__file__).parent
    return sorted(
        module.name
        for module in pkgutil.iter_modules([str(here)])
        if module.ispkg and not (here / module.name / "settings.py").exists()
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


def host_endpoint(name: str, **settings: Any) -> Endpoint:
    """An endpoint for one host's URL conf, left out of the project-wide system checks.

    Such a host mounts its endpoint at ``mcp`` in a URL conf of its own, which its tests
    select with ``@pytest.mark.urls``; the project's checks run against the suite's URL
    conf, where that path belongs to the product's endpoint. Its checks are its endpoint's
    own (``endpoint.check()``), run by its tests.
    """
    from mcp_endpoint.endpoint import Endpoint, endpoints

    # ``settings`` are MCP_ENDPOINT keys, an endpoint's keyword arguments in upper case.
    options = {key.lower(): value for key, value in {"SERVER_NAME": name, **settings}.items()}
    endpoint = Endpoint(name, **options)
    endpoints.discard(endpoint)
    return endpoint
