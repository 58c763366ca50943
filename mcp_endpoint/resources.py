"""Resources and resource templates, registered by URI."""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, get_type_hints
from urllib.parse import quote, unquote

from mcp_endpoint.context import Context
from mcp_endpoint.protocol.content import ResourceContents

VARIABLE = re.compile(r"\{([A-Za-z0-9_]+)\}")
# From a changed row to the variables of the URI(s) it changes; falsy for none.
UriMapper = Callable[[Any], Mapping[str, Any] | Iterable[Mapping[str, Any]] | None]


class ResourceNotFound(LookupError):
    """Raised by a resource function when the URI names nothing the caller may read."""


# Digits a 64-bit integer column holds whatever their value: longer text names no row, and
# int() of thousands of digits is a ValueError (Python's limit on digits converted).
MAX_INTEGER_DIGITS = 18
INTEGER = re.compile(rf"-?[0-9]{{1,{MAX_INTEGER_DIGITS}}}")


def template_integer(text: str) -> int:
    """A template variable of a parameter annotated ``int``, as an integer; ASCII digits
    only (``"¹"`` is a digit to ``str.isdigit`` but not to ``int``), else
    :class:`ResourceNotFound`, as for any URI that names nothing."""
    if not INTEGER.fullmatch(text):
        raise ResourceNotFound(text)
    return int(text)


class Resource:
    """A resource at a fixed URI, read by calling ``fn``."""

    def __init__(
        self,
        fn: Callable[..., Any],
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        scopes: Iterable[str] = (),
        follows: Iterable[type[Any]] | Mapping[type[Any], UriMapper | None] = (),
    ) -> None:
        self.fn = fn
        # The models whose saved or deleted rows change this resource (subscriptions.py).
        self.follows: dict[type[Any], UriMapper | None] = (
            dict(follows) if isinstance(follows, Mapping) else dict.fromkeys(follows)
        )
        self.uri = uri
        self.name = name or fn.__name__
        self.title = title
        self.description = description or inspect.cleandoc(fn.__doc__ or "") or self.name
        self.mime_type = mime_type
        self.required_scopes = frozenset(scopes)
        self.context_parameter = _context_parameter(fn)
        # Variables the function takes as integers: converted (or not found) before the call.
        self.integer_parameters = frozenset(
            name for name, hint in get_type_hints(fn).items() if hint is int
        )

    def describe(self) -> dict[str, Any]:
        body: dict[str, Any] = {"uri": self.uri, "name": self.name}
        if self.title:
            body["title"] = self.title
        body["description"] = self.description
        if self.mime_type:
            body["mimeType"] = self.mime_type
        return body

    def uris_for(self, instance: Any, mapper: UriMapper | None) -> list[str]:
        """The URIs a changed row of a followed model changes: this one, unless the mapper
        says the row is none of its business."""
        if mapper is not None and not mapper(instance):
            return []
        return [self.uri]

    def read(self, uri: str, variables: dict[str, str], context: Context) -> list[ResourceContents]:
        kwargs: dict[str, Any] = dict(variables)
        for name in self.integer_parameters & kwargs.keys():
            kwargs[name] = template_integer(kwargs[name])
        if self.context_parameter:
            kwargs[self.context_parameter] = context
        return as_contents(uri, self.fn(**kwargs), self.mime_type)


class ResourceTemplate(Resource):
    """Resources whose URIs match an RFC 6570 level-1 template (``test://item/{id}``)."""

    def __init__(self, fn: Callable[..., Any], uri_template: str, **kwargs: Any) -> None:
        super().__init__(fn, uri_template, **kwargs)
        self.uri_template = uri_template
        self.variables = VARIABLE.findall(uri_template)
        pattern = ""
        last = 0
        for match in VARIABLE.finditer(uri_template):
            pattern += re.escape(uri_template[last : match.start()])
            pattern += f"(?P<{match.group(1)}>[^/?#]+)"
            last = match.end()
        pattern += re.escape(uri_template[last:])
        self.pattern = re.compile(f"^{pattern}$")

    def describe(self) -> dict[str, Any]:
        body = super().describe()
        body["uriTemplate"] = body.pop("uri")
        return body

    def uris_for(self, instance: Any, mapper: UriMapper | None) -> list[str]:
        if mapper is None:
            return []  # system check E082: a template needs the variables of a row
        found = mapper(instance)
        if not found:
            return []
        rows = [found] if isinstance(found, Mapping) else list(found)
        return [self.expand(row) for row in rows]

    def expand(self, variables: Mapping[str, Any]) -> str:
        return VARIABLE.sub(lambda m: quote(str(variables[m.group(1)]), safe=""), self.uri_template)

    def match(self, uri: str) -> dict[str, str] | None:
        found = self.pattern.match(uri)
        return found.groupdict() if found else None

    def canonical(self, variables: Mapping[str, str]) -> str:
        """The one URI of the resource these variables name, as :meth:`expand` writes it
        from a changed row: escapes decoded, a decimal integer without leading zeros."""
        return self.expand({name: canonical_value(value) for name, value in variables.items()})


def canonical_value(value: str) -> str:
    decoded = unquote(value)
    # A row's integer key is written as str(pk): "01" and "1" name the same row.
    if decoded.isascii() and decoded.isdigit():
        # Not int(): its digit limit would make a long number an error.
        return decoded.lstrip("0") or "0"
    return decoded


def _context_parameter(fn: Callable[..., Any]) -> str | None:
    hints = get_type_hints(fn)
    for name, hint in hints.items():
        if inspect.isclass(hint) and issubclass(hint, Context):
            return name
    return None


def as_contents(uri: str, value: Any, mime_type: str | None) -> list[ResourceContents]:
    if isinstance(value, ResourceContents):
        return [value]
    if isinstance(value, list) and all(isinstance(v, ResourceContents) for v in value):
        return value
    if isinstance(value, bytes):
        return [ResourceContents(uri=uri, blob=value, mime_type=mime_type)]
    if isinstance(value, str):
        return [ResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return [ResourceContents(uri=uri, text=text, mime_type=mime_type or "application/json")]


class ResourceRegistry:
    """Fixed resources by URI and templates in registration order."""

    def __init__(self) -> None:
        self._resources: dict[str, Resource] = {}
        self._templates: list[ResourceTemplate] = []
        self.duplicates: list[str] = []

    def register(self, resource: Resource) -> Resource:
        if isinstance(resource, ResourceTemplate):
            if any(t.uri_template == resource.uri_template for t in self._templates):
                self.duplicates.append(resource.uri_template)
            else:
                self._templates.append(resource)
        elif resource.uri in self._resources:
            self.duplicates.append(resource.uri)
        else:
            self._resources[resource.uri] = resource
        return resource

    def resources(self) -> Iterator[Resource]:
        return iter(list(self._resources.values()))

    def templates(self) -> Iterator[ResourceTemplate]:
        return iter(list(self._templates))

    def canonical(self, uri: str) -> str:
        """The URI a subscription to ``uri`` is kept under, so that one resource is one
        subscription however a client spells it (``/01/`` and ``/%31/`` are ``/1/``)."""
        found = self.find(uri)
        if found is None or not isinstance(found[0], ResourceTemplate):
            return uri
        return found[0].canonical(found[1])

    def find(self, uri: str) -> tuple[Resource, dict[str, str]] | None:
        if uri in self._resources:
            return self._resources[uri], {}
        for template in self._templates:
            variables = template.match(uri)
            if variables is not None:
                return template, variables
        return None
