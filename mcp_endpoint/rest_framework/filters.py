"""Which django-filter filters a list tool offers, so that a large filterset fits a context.

A large product's filtersets generate a dozen lookups per field (``name``, ``name__n``,
``name__ic``, ``name__nisw``, ...): hundreds of arguments for one list tool. By default a
list tool offers each field's exact filter and its multi-value form (``name``,
``id__in``) as arguments of their own, and every other lookup in one documented object
argument, ``lookups`` (``{"name__ic": "lon"}``), whose keys a pattern bounds. The
``FILTER_LOOKUPS`` setting offers the exact forms only, or every filter as its own
argument.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

LOOKUPS_ARGUMENT = "lookups"
# The lookups that are a field's own form: the value itself, or a list of values.
EXACT_LOOKUPS = frozenset({"exact", "in"})
SCALAR = {"anyOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}]}


@dataclass(frozen=True)
class FilterArguments:
    """What a list tool makes of its view's filterset."""

    # Filters left out as arguments of their own.
    hidden: frozenset[str]
    # The schema of the ``lookups`` argument that holds them, or None when not offered.
    grouped: dict[str, Any] | None


NO_FILTERS = FilterArguments(frozenset(), None)


def filter_arguments(view: Any, offered: Mapping[str, Any], mode: str) -> FilterArguments:
    """How the filters among the ``offered`` query arguments become tool arguments."""
    if mode == "all":
        return NO_FILTERS
    lookups = {name: f for name, f in extra_lookups(view).items() if name in offered}
    if not lookups:
        return NO_FILTERS
    grouped = None
    if mode == "grouped" and LOOKUPS_ARGUMENT not in offered:
        grouped = lookups_schema(lookups)
    return FilterArguments(frozenset(lookups), grouped)


def extra_lookups(view: Any) -> dict[str, Any]:
    """The filters of the view's filterset that are lookups beyond a field's own forms:
    named ``<field>__<lookup>`` and either negated or another lookup than exact or in."""
    filterset_class = None
    for backend in getattr(view, "filter_backends", None) or ():
        if hasattr(backend, "get_filterset_class"):
            try:
                filterset_class = backend().get_filterset_class(view, view.get_queryset())
            except Exception:
                # Host code (get_queryset, a filterset factory) on a request made up for the
                # schema: when it cannot say, every filter stays an argument of its own.
                return {}
            break
    filters: Mapping[str, Any] = getattr(filterset_class, "base_filters", None) or {}
    return {
        name: f
        for name, f in filters.items()
        if "__" in name
        and (
            getattr(f, "exclude", False) or getattr(f, "lookup_expr", "exact") not in EXACT_LOOKUPS
        )
    }


def lookups_schema(lookups: Mapping[str, Any]) -> dict[str, Any]:
    """The ``lookups`` argument: an object whose keys are the grouped filters' names."""
    by_field: dict[str, list[str]] = {}
    meaning: dict[str, str] = {}
    for name, f in lookups.items():
        field, suffix = name.rsplit("__", 1)
        by_field.setdefault(field, []).append(suffix)
        expr = str(getattr(f, "lookup_expr", "exact"))
        meaning.setdefault(suffix, f"not {expr}" if getattr(f, "exclude", False) else expr)
    # Fields that share their lookups are named together, in the text and in the pattern.
    groups: dict[tuple[str, ...], list[str]] = {}
    for field, suffixes in by_field.items():
        groups.setdefault(tuple(suffixes), []).append(field)
    alternatives = [
        f"(?:{'|'.join(re.escape(f) for f in fields)})__(?:{'|'.join(map(re.escape, suffixes))})"
        for suffixes, fields in groups.items()
    ]
    listed = "; ".join(
        f"{', '.join(fields)}: {', '.join(suffixes)}" for suffixes, fields in groups.items()
    )
    explained = ", ".join(f"{suffix} = {text}" for suffix, text in meaning.items())
    example = next(iter(lookups))
    return {
        "type": "object",
        "description": (
            f'More filters, by field and lookup, such as {{"{example}": ...}}. '
            f"Fields and their lookups: {listed}. Lookups: {explained}."
        ),
        "propertyNames": {"pattern": f"^(?:{'|'.join(alternatives)})$"},
        "additionalProperties": SCALAR,
    }
