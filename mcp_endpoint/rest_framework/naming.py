"""Tool names from viewsets: verbs for actions, nouns from models or basenames."""

from __future__ import annotations

import re
from typing import Any

from django.utils.encoding import force_str
from inflection import pluralize, singularize

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


# What each method of an action that answers several does, for its tool's name.
METHOD_VERBS = {
    "GET": "get",
    "POST": "add",
    "PUT": "replace",
    "PATCH": "update",
    "DELETE": "delete",
}


def action_methods(viewset: type[Any], action: str) -> dict[str, str]:
    """METHOD -> the viewset method that answers it, for an extra action routed for more
    than one HTTP method (``@action(methods=["get", "post", "delete"])``, or ``.mapping``);
    empty for every other action, whose one method makes one tool."""
    extras = getattr(viewset, "get_extra_actions", None)
    for extra in extras() if extras is not None else ():
        if extra.__name__ == action:
            mapping = {m.upper(): name for m, name in getattr(extra, "mapping", {}).items()}
            mapping = {m: name for m, name in mapping.items() if m not in ("HEAD", "OPTIONS")}
            return mapping if len(mapping) > 1 else {}
    return {}


def method_tool_name(action: str, method: str, detail: bool, singular: str, plural: str) -> str:
    """The tool of one method of a multi-method action, named by what that method does:
    ``notes`` on documents as ``get_document_notes``, ``add_document_note``,
    ``delete_document_note``. A write acts on one item, so its noun is singular."""
    verb = METHOD_VERBS.get(method, method.lower())
    noun = action if method == "GET" else singularize(action)
    owner = singular if detail else plural
    return without_stutter(f"{verb}_{owner}_{noun}")


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
