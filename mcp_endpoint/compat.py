"""Other libraries, where the app leans on more than their documented API.

Two kinds of thing live here, each in one place so that an upstream change breaks one
function and the test beside it (``tests/test_compat.py``), not the app at large:

- django-oauth-toolkit, an optional dependency: whether it is here and usable;
- the private attributes of a required library the app still reads or sets:
  drf-spectacular's record of the warnings it emits while describing a view
  (:func:`spectacular_messages`), and its django-filter extension's memory that GeoDjango
  is not in use (:func:`skip_absent_geodjango`).

API keys, the endpoint and the DRF adapter work without the toolkit; OAuth for MCP clients
needs it installed (``pip install mcp-endpoint[oauth]``), in ``INSTALLED_APPS``, and at a
version that has what MCP clients are promised (client ID metadata documents, resource
binding, the RFC 9700 gates): 3.4 or later, before 4. Nothing here imports
``oauth2_provider``: a host without it never loads it, and a host that keeps an older
toolkit for its own clients never has our OAuth code run against that toolkit's tables.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib import metadata, util
from typing import Any

from django.apps import apps

TOOLKIT_APP = "oauth2_provider"
TOOLKIT_DISTRIBUTION = "django-oauth-toolkit"
# The range pyproject.toml's "oauth" extra asks for.
TOOLKIT_MINIMUM = (3, 4)
TOOLKIT_BELOW = (4,)


@functools.lru_cache(maxsize=1)
def toolkit_version() -> str | None:
    """The installed django-oauth-toolkit's version, or None when it is not installed."""
    try:
        return metadata.version(TOOLKIT_DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return None


def version_tuple(version: str) -> tuple[int, ...]:
    """``"3.4.1"`` -> ``(3, 4, 1)``; ``"2.3.0rc1"`` -> ``(2, 3, 0)``: the leading numbers."""
    numbers = []
    for part in version.split("."):
        match = re.match(r"\d+", part)
        if match is None:
            break
        numbers.append(int(match.group()))
        if match.end() != len(part):
            break
    return tuple(numbers)


def version_supported(version: str | None) -> bool:
    """Whether ``version`` of the toolkit has what OAuth for MCP clients needs."""
    if version is None:
        return False
    return TOOLKIT_MINIMUM <= version_tuple(version) < TOOLKIT_BELOW


def toolkit_in_use() -> bool:
    """Whether the host runs django-oauth-toolkit (in ``INSTALLED_APPS``), any version."""
    return apps.is_installed(TOOLKIT_APP)


def oauth_enabled() -> bool:
    """Whether OAuth for MCP clients is on: the toolkit in use, at a version it supports.

    When the host keeps an older toolkit for its own clients, ours stays off (check
    ``mcp_endpoint.W075`` says why) and the host's own OAuth is left as it was.
    """
    return toolkit_in_use() and version_supported(toolkit_version())


def is_toolkit_class(cls: Any, names: Iterable[str]) -> bool:
    """Whether ``cls`` is, or derives from, one of the toolkit's classes ``names``.

    By name and module, so that the question can be asked without importing the toolkit:
    a class that derives from the toolkit's was defined after the toolkit was imported.
    """
    wanted = set(names)
    return any(
        base.__name__ in wanted and base.__module__.split(".")[0] == TOOLKIT_APP
        for base in getattr(cls, "__mro__", ())
    )


# -- drf-spectacular ------------------------------------------------------------------------


@dataclass
class SchemaMessages:
    """The warnings and errors drf-spectacular emitted inside :func:`spectacular_messages`,
    filled in when the block ends."""

    warnings: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@contextlib.contextmanager
def spectacular_messages() -> Iterator[SchemaMessages]:
    """Collect what drf-spectacular warns of while the block describes a view, silenced.

    drf-spectacular has no public way to read its messages: its ``GENERATOR_STATS`` keeps
    them in ``_warn_cache`` and ``_error_cache`` (for its ``spectacular`` command's
    summary), and the breadcrumbs of the view being described in ``_traces``, which it
    pops only when nothing raised, so an exception from host code would otherwise leave
    that view's name prefixed to every later warning. Those three attributes are read
    here and nowhere else.
    """
    from drf_spectacular.drainage import GENERATOR_STATS

    found = SchemaMessages()
    traces = len(GENERATOR_STATS._traces)
    try:
        with GENERATOR_STATS.silence():
            GENERATOR_STATS.reset()
            yield found
            found.warnings = sorted(GENERATOR_STATS._warn_cache)
            found.errors = sorted(GENERATOR_STATS._error_cache)
    finally:
        del GENERATOR_STATS._traces[traces:]
        GENERATOR_STATS.reset()


@functools.cache
def skip_absent_geodjango() -> None:
    """Tell drf-spectacular's django-filter extension, before it describes a filter, that
    no filter can be a geometry when ``rest_framework_gis`` is not installed.

    The extension asks of each filter whether it is one (``_is_gis``) by importing
    GeoDjango's ``GeometryField`` and ``rest_framework_gis``'s ``GeometryFilter`` together,
    and remembers a failure in its class attribute ``_has_gis``. The first import searches
    for the GDAL library, which runs ``ldconfig`` and the linker for a dozen candidate
    names where GDAL is absent (about 0.15 s of CPU and 0.5 s in all) or loads it where it
    is there, in every process that describes a filter: each worker of a host whose
    filters are tools. Without ``rest_framework_gis`` the extension's answer is no either
    way; it is given here without the search. That attribute is set here and nowhere else.
    """
    if util.find_spec("django_filters") is None or util.find_spec("rest_framework_gis"):
        return
    from drf_spectacular.contrib.django_filters import DjangoFilterExtension

    DjangoFilterExtension._has_gis = False  # type: ignore[attr-defined]
