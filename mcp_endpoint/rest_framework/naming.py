"""Tool names from viewsets: verbs for actions, nouns from models or basenames."""

from __future__ import annotations

import re
from typing import Any

from django.utils.encoding import force_str
from inflection import pluralize

# Standard actions: the verb of the tool name, and whether the noun is plural.
STANDARD_ACTIONS: dict[str, tuple[str, bool]] = {
    "list": ("list", True),
    "retrieve": ("get", False),
    "create": ("create", False),
    "update": ("replace", False),
    "partial_update": ("update", False),
    "destroy": ("delete", False),
}


def viewset_actions(viewset: type[Any]) -> list[tuple[str, bool]]:
    """(action, detail) for the standard actions the viewset has and its extra actions."""
    found = [(a, a not in ("list", "create")) for a in STANDARD_ACTIONS if hasattr(viewset, a)]
    for extra in viewset.get_extra_actions():
        found.append((extra.__name__, bool(getattr(extra, "detail", False))))
    return found


def default_tool_name(action: str, detail: bool, singular: str, plural: str) -> str:
    verb, many = STANDARD_ACTIONS.get(action, (action, not detail))
    return without_stutter(f"{verb}_{plural if many else singular}")


def without_stutter(name: str) -> str:
    """``name`` with a run of words said twice in a row said once: an action named after
    its verb and noun (``list_positions`` on positions: ``list_list_...``), a viewset named
    after its parent (``order`` + ``order_payments``: ``order_order_...``). A plural after
    its singular is not a repetition: ``list_user_users`` lists a user's users."""
    words = name.split("_")
    changed = True
    while changed:
        changed = False
        for size in range(len(words) // 2, 0, -1):
            for start in range(len(words) - 2 * size + 1):
                first = words[start : start + size]
                second = words[start + size : start + 2 * size]
                if first == second:
                    words[start : start + size] = []
                    changed = True
                    break
            if changed:
                break
    return "_".join(words)


def model_of(viewset: type[Any]) -> Any:
    queryset = getattr(viewset, "queryset", None)
    if queryset is not None:
        return queryset.model
    serializer = getattr(viewset, "serializer_class", None)
    return getattr(getattr(serializer, "Meta", None), "model", None)


def default_basename(viewset: type[Any]) -> str:
    model = model_of(viewset)
    if model is not None:
        return str(model._meta.model_name)
    name = viewset.__name__.removesuffix("ViewSet").removesuffix("Viewset")
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower() or "item"


def nouns(
    viewset: type[Any], basename: str, singular: str | None, plural: str | None
) -> tuple[str, str]:
    """(singular, plural) for tool names: the model's verbose names, else the basename and
    its English plural (``category`` -> ``categories``, ``status`` -> ``statuses``; a
    basename already plural, ``snippets``, stays as it is)."""
    model = model_of(viewset)
    if model is not None:
        one = force_str(model._meta.verbose_name)
        # Django's default plural is the name and an "s" ("propertys", "mediums"): the
        # model's own when it says one, else the English plural ("properties", "media").
        declared = "verbose_name_plural" in model._meta.original_attrs
        many = force_str(model._meta.verbose_name_plural) if declared else plural_of(one)
    else:
        one, many = basename, pluralize(basename)
    return identifier(singular or one), identifier(plural or many)


def plural_of(noun: str) -> str:
    """The English plural of the last word of ``noun`` (``order payment`` -> ``order
    payments``, ``property`` -> ``properties``, ``medium`` -> ``media``)."""
    head, _, last = noun.rpartition(" ")
    return f"{head} {pluralize(last)}" if head else pluralize(last)


def identifier(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "_", text).strip("_").lower()


# What a nested route's kwarg says after the parent's noun: user_pk, project_id, team_slug.
PARENT_KWARG_SUFFIX = re.compile(r"_+(pk|id|slug|uuid)$")


def parent_noun(kwarg: str) -> str:
    """The noun of the parent a nested route's URL kwarg names: ``user_pk`` -> ``user``."""
    return identifier(PARENT_KWARG_SUFFIX.sub("", kwarg)) or identifier(kwarg)


def prefixed_nouns(prefix: str, singular: str, plural: str) -> tuple[str, str]:
    """The nouns of a nested registration's tools: ``user`` + ``snippet`` -> ``user_snippet``
    (``list_user_snippets``, ``get_user_snippet``); an empty prefix keeps them."""
    prefix = identifier(prefix)
    if not prefix:
        return singular, plural
    return without_stutter(f"{prefix}_{singular}"), without_stutter(f"{prefix}_{plural}")
