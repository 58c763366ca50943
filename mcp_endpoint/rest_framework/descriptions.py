"""A tool's description, from what the host wrote about the action and its view.

The action's own words come first: ``@extend_schema(summary=..., description=...)``, else the
docstring of the action's handler (a method the host wrote, not one of DRF's mixins), else a
sentence made for a standard action ("List snippets, a page at a time."). The view's
docstring follows, without the sentences that only say which actions or methods the view
offers on its objects (DRF's documentation and tutorial teach hosts to write
"This viewset automatically provides `list`, `create` ... actions."; a model learns nothing
from them that the tool's name and schema do not say). What a list tool claims it can do (a
page at a time, filters, search, ordering) is what its view really does.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from inspect import cleandoc
from typing import Any

from django.utils.encoding import force_str

from mcp_endpoint.rest_framework.naming import STANDARD_ACTIONS, model_of

# An APIView's handlers, as the standard action a generic view's mixin gives them.
HANDLER_ACTIONS = {
    "post": ("create",),
    "put": ("update",),
    "patch": ("partial_update",),
    "delete": ("destroy",),
}

# Words a sentence may use and still say nothing but which operations a view offers on its
# objects: "This viewset automatically provides `list` and `retrieve` actions.", "API
# endpoint that allows users to be viewed or edited.", "A simple ViewSet for listing or
# retrieving users.", "Retrieve, update or delete a snippet instance." (with the nouns of
# the view's objects, and any `name` or name() a sentence quotes).
STOCK_TEXT = """
a an the this that these those it its here which who
we you our also additionally extra automatically simply simple basic generic default
standard usual common all every each one single new existing some any
and or but to be is are will can may for of on in by with from at as via
api rest drf framework endpoint endpoints route routes url urls resource resources
view views viewset viewsets set sets class apiview genericapiview genericviewset
modelviewset readonlymodelviewset viewsetmixin mixin mixins handler handlers
provide provides provided providing offer offers offering support supports supporting
allow allows allowing let lets enable enables handle handles handling implement
implements implementing expose exposes exposing give gives serve serves
action actions method methods operation operations crud http request requests
instance instances object objects record records item items model models entry entries
list lists listing listed create creates creating created add adds adding added
retrieve retrieves retrieving retrieved get gets getting fetch fetches fetching
viewed viewing show shows showing read reads reading readonly only
edit edits edited editing update updates updating updated modify modifies modifying
change changes changing changed replace replaces replacing replaced partial partially
delete deletes deleting deleted destroy destroys destroying destroyed remove removes
removing removed write writes writing manage manages managing managed
"""
STOCK_WORDS = frozenset(STOCK_TEXT.split())
TOKEN = re.compile(r"`[^`]*`|[A-Za-z_][\w.]*\(\)|[A-Za-z][A-Za-z0-9']*")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


def description_for(
    *,
    view: Any,
    viewset: type[Any],
    action: str,
    options_description: str | None,
    operation: Mapping[str, Any],
    query_arguments: Collection[str],
    path_arguments: Mapping[str, str],
    singular: str,
    plural: str,
) -> str:
    """The description of one action's tool (see the module's docstring)."""
    if options_description:
        return options_description
    nouns = object_nouns(viewset, singular, plural)
    view_doc = stripped(host_doc(viewset), nouns)
    lead = own_words(viewset, action, operation)
    if not lead:
        standard = standard_action(viewset, action, path_arguments)
        if standard is not None:
            lead = standard_sentence(
                standard, view, query_arguments, path_arguments, singular, plural
            )
    if lead and view_doc and first_paragraph(lead) != view_doc:
        return f"{lead} {view_doc}"
    return lead or view_doc


def own_words(viewset: type[Any], action: str, operation: Mapping[str, Any]) -> str:
    """What the host wrote about this action: its ``@extend_schema`` summary and
    description, else its handler's docstring."""
    handler = getattr(viewset, action, None)
    handler_doc = "" if written_by_drf(handler) else own_doc(docstring(handler))
    summary = sentence(operation.get("summary"))
    described = first_paragraph(operation.get("description"))
    # drf-spectacular describes an operation by the handler's docstring, else the view's:
    # any other description is the host's own, given with @extend_schema.
    raw_handler_doc = "" if written_by_drf(handler) else first_paragraph(docstring(handler))
    if described and described in (raw_handler_doc, first_paragraph(host_doc(viewset))):
        described = ""
    parts = [p for p in (summary, described or handler_doc) if p]
    if len(parts) == 2 and parts[0].rstrip(".") == parts[1].rstrip("."):
        parts = parts[1:]
    return " ".join(parts)


def standard_action(
    viewset: type[Any], action: str, path_arguments: Mapping[str, str]
) -> str | None:
    """The standard action a viewset action or an APIView handler is, if it is one."""
    if action in STANDARD_ACTIONS:
        return action
    if action == "get":
        candidates: tuple[str, ...] = ("retrieve",) if path_arguments else ("list",)
    else:
        candidates = HANDLER_ACTIONS.get(action, ())
    # A generic view's handler runs its mixin's action; a plain APIView's is its own.
    return next((c for c in candidates if hasattr(viewset, c)), None)


def standard_sentence(
    action: str,
    view: Any,
    query_arguments: Collection[str],
    path_arguments: Mapping[str, str],
    singular: str,
    plural: str,
) -> str:
    one, many = singular.replace("_", " "), plural.replace("_", " ")
    if action == "list":
        ways = list_abilities(view, query_arguments)
        return f"List {many}" + (f", {', '.join(ways)}." if ways else ".")
    # The object's own lookup, not a parent's kwarg or a URL path version before it.
    kwarg = getattr(view, "lookup_url_kwarg", None) or getattr(view, "lookup_field", "pk")
    lookup = next(
        (arg for arg, name in path_arguments.items() if name == kwarg),
        next(iter(path_arguments), "id"),
    )
    return {
        "retrieve": f"Get one {one} by {lookup}.",
        "create": f"Create {article(one)} {one}.",
        "update": f"Replace {article(one)} {one}: every writable field.",
        "partial_update": f"Update some fields of {article(one)} {one}.",
        "destroy": f"Delete {article(one)} {one}.",
    }[action]


def list_abilities(view: Any, query_arguments: Collection[str]) -> list[str]:
    """What a list tool can do, as its view does it: never a filter, a search or an
    ordering the view does not apply."""
    from rest_framework.filters import OrderingFilter, SearchFilter

    backends = list(getattr(view, "filter_backends", None) or ())
    paginator = getattr(view, "paginator", None)
    paging = {
        name
        for attribute in (
            "page_query_param",
            "page_size_query_param",
            "limit_query_param",
            "offset_query_param",
            "cursor_query_param",
        )
        if isinstance(name := getattr(paginator, attribute, None), str)
    }
    searching = {
        getattr(b, "search_param", "search")
        for b in backends
        if isinstance(b, type) and issubclass(b, SearchFilter)
    }
    ordering = {
        getattr(b, "ordering_param", "ordering")
        for b in backends
        if isinstance(b, type) and issubclass(b, OrderingFilter)
    }
    arguments = set(query_arguments)
    # SearchFilter offers its parameter on every list, and ignores it without search_fields.
    searchable = bool(arguments & searching) and any(
        b().get_search_fields(view, view.request)
        for b in backends
        if isinstance(b, type) and issubclass(b, SearchFilter)
    )
    # ordering_fields: None orders by the serializer's fields, "__all__" by any field, an
    # empty list by none (the view keeps its default order whatever is asked).
    ordering_fields = getattr(view, "ordering_fields", None)
    orderable = bool(arguments & ordering) and (ordering_fields is None or bool(ordering_fields))
    filtered = bool(arguments - paging - searching - ordering)
    return [
        label
        for label, present in (
            ("a page at a time", bool(paging) and bool(arguments & paging)),
            ("with filters", filtered),
            ("searchable", searchable),
            ("in the order you ask", orderable),
        )
        if present
    ]


def stripped(text: str, nouns: Collection[str]) -> str:
    """The first paragraph of ``text`` that says something once the sentences that only
    name the view's operations, and those about how the view is built, are left out."""
    for paragraph in paragraphs(text):
        kept = [
            s
            for s in SENTENCE_END.split(paragraph)
            if not is_boilerplate(s, nouns) and not is_implementation_note(s)
        ]
        if kept:
            return " ".join(kept)
    return ""


# Words of a sentence written for the view's maintainers, not for its users: how it
# queries (prefetching to avoid N+1 queries), caches, or is put together.
IMPLEMENTATION_NOTE = re.compile(
    r"\b(?:prefetch\w*|select_related|N\s*\+\s*1|n\+1|quer(?:y|ies)\s+count|"
    r"querysets?|subquer\w*|get_queryset|get_serializer\w*|serializer_class|"
    r"database\s+(?:hits?|round[- ]?trips?|queries)|orm|"
    r"cach(?:e|ed|es|ing)|memoi[sz]\w*|optimi[sz]\w*|denormali[sz]\w*|"
    r"internals?|internally|implementation|implemented|refactor\w*|workaround|hack|"
    r"TODO|FIXME|XXX|mixin|subclass\w*|overrid\w*|monkey[- ]?patch\w*|"
    r"perform_create|perform_update|perform_destroy|self\.\w+)\b",
    re.IGNORECASE,
)


def is_implementation_note(text: str) -> bool:
    """Whether a sentence is about how the view does its work (its queries, its cache, its
    classes) rather than what it does for the user: such notes never reach the model."""
    return IMPLEMENTATION_NOTE.search(text) is not None


def own_doc(text: str) -> str:
    """A handler's first paragraph without its implementation notes."""
    kept = [s for s in SENTENCE_END.split(first_paragraph(text)) if not is_implementation_note(s)]
    return " ".join(kept)


def is_boilerplate(text: str, nouns: Collection[str]) -> bool:
    """Whether a sentence only says which operations a view offers on its objects: every
    word of it is a stock word, a noun of the view's objects, or a quoted name."""
    words = TOKEN.findall(text)
    return all(
        w.startswith("`") or w.endswith("()") or w.lower() in STOCK_WORDS or w.lower() in nouns
        for w in words
    )


def object_nouns(viewset: type[Any], singular: str, plural: str) -> frozenset[str]:
    """The words that name the view's objects: its nouns, its model's names."""
    names = [singular, plural]
    model = model_of(viewset)
    if model is not None:
        meta = model._meta
        names += [
            meta.object_name or "",
            force_str(meta.verbose_name),
            force_str(meta.verbose_name_plural),
        ]
    return frozenset(w.lower() for n in names for w in re.split(r"[\W_]+", n) if w)


def host_doc(viewset: type[Any]) -> str:
    """The view's docstring, or its nearest base's that the host wrote (never DRF's)."""
    for cls in viewset.__mro__:
        if written_by_drf(cls):
            break
        if cls.__doc__:
            return cleandoc(cls.__doc__)
    return ""


def written_by_drf(obj: Any) -> bool:
    return obj is None or str(getattr(obj, "__module__", "")).startswith("rest_framework.")


def docstring(obj: Any) -> str:
    doc = getattr(obj, "__doc__", None)
    return cleandoc(doc) if isinstance(doc, str) else ""


def paragraphs(text: str | None) -> list[str]:
    if not text:
        return []
    parts = (p.replace("\n", " ").strip() for p in cleandoc(force_str(text)).split("\n\n"))
    return [re.sub(r"\s+", " ", p) for p in parts if p]


def first_paragraph(text: str | None) -> str:
    found = paragraphs(text)
    return found[0] if found else ""


def sentence(text: Any) -> str:
    """A summary as a sentence: drf-spectacular's summaries are titles, without a stop."""
    line = first_paragraph(text)
    return line if not line or line[-1] in ".!?" else f"{line}."


def article(noun: str) -> str:
    # "a user", "a unit": a leading u is too often sounded "you" to take "an".
    return "an" if noun[:1].lower() in "aeio" else "a"


def counted(count: int, singular: str, plural: str) -> str:
    """``1 snippet``, ``2 snippets``: a count with the noun that agrees with it."""
    noun = singular if count == 1 else plural
    return f"{count} {noun.replace('_', ' ')}"
