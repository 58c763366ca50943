"""Portable JSON Schema 2020-12 for tool schemas.

Clients differ in what they accept: some do not resolve ``$ref``, some reject type arrays
(``"type": ["string", "null"]``), all want an object root. :func:`portable` rewrites a
schema, from pydantic or from drf-spectacular's OpenAPI output, into the subset every major
client accepts: references inlined, nullability as ``anyOf`` with ``{"type": "null"}``,
OpenAPI-only keywords dropped, bounds as JSON numbers. :func:`metaschema_errors` says
whether the result is valid JSON Schema 2020-12, and :func:`compact_choices` keeps long
choice lists from filling a model's context.
"""

from __future__ import annotations

import copy
import hashlib
import re
from collections.abc import Collection, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson
from jsonschema import Draft202012Validator

# OpenAPI and generator keywords that are not JSON Schema, or that only add noise for a model.
DROPPED_KEYS = frozenset(
    {
        "example",
        "examples",
        "discriminator",
        "xml",
        "externalDocs",
        "deprecated",
        "$schema",
        "$id",
        "$defs",
        "definitions",
        "components",
    }
)


# Keywords whose value must be a JSON number. drf-spectacular's per-operation output carries
# a DecimalField's bounds as Decimal objects (a whole document would be normalised later),
# which become strings ("90.0") when encoded as they are.
NUMERIC_KEYWORDS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "minContains",
        "maxContains",
    }
)


class SchemaError(ValueError):
    """A schema that cannot be made portable (a reference that does not resolve, a cycle)."""


def portable(
    schema: Mapping[str, Any],
    definitions: Mapping[str, Any] | None = None,
    *,
    drop_titles: bool = True,
) -> dict[str, Any]:
    """A self-contained copy of ``schema`` with references inlined and nullability spelled out.

    ``definitions`` maps reference targets (``"#/components/schemas/Task"`` or
    ``"#/$defs/Task"``) to their schemas; the schema's own ``$defs`` are used as well.
    """
    refs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        for name, value in (schema.get(key) or {}).items():
            refs[f"#/{key}/{name}"] = value
    for name, value in (definitions or {}).items():
        refs[name if name.startswith("#") else f"#/components/schemas/{name}"] = value
    return _convert(schema, refs, (), drop_titles, root=True)


def _convert(
    node: Any, refs: Mapping[str, Any], seen: tuple[str, ...], drop_titles: bool, root: bool
) -> Any:
    if isinstance(node, list):
        return [_convert(item, refs, seen, drop_titles, False) for item in node]
    if not isinstance(node, Mapping):
        return copy.deepcopy(node)
    if "$ref" in node:
        target = node["$ref"]
        if target in seen:
            raise SchemaError(f"Recursive schema reference {target!r} cannot be inlined")
        if target not in refs:
            raise SchemaError(f"Schema reference {target!r} does not resolve")
        merged = dict(refs[target])
        merged.update({k: v for k, v in node.items() if k != "$ref"})
        return _convert(merged, refs, (*seen, target), drop_titles, root)
    return _tidy(node, _convert_keywords(node, refs, seen, drop_titles, root))


def _convert_keywords(
    node: Mapping[str, Any],
    refs: Mapping[str, Any],
    seen: tuple[str, ...],
    drop_titles: bool,
    root: bool,
) -> dict[str, Any]:
    """Each keyword of ``node`` kept, converted or dropped; its subschemas converted."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        # OpenAPI's vendor keys go; the MCP's own x-mcp-header is part of the tool's contract.
        if (
            key in DROPPED_KEYS
            or key == "nullable"
            or (key.startswith("x-") and key != "x-mcp-header")
        ):
            continue
        if key == "title" and drop_titles and not root:
            continue
        if key == "title" and drop_titles and root:
            continue
        if key in {"properties", "patternProperties", "$defs", "dependentSchemas"}:
            out[key] = {
                name: _convert(sub, refs, seen, drop_titles, False) for name, sub in value.items()
            }
        elif key in {
            "items",
            "additionalProperties",
            "not",
            "contains",
            "propertyNames",
            "if",
            "then",
            "else",
            "unevaluatedProperties",
            "unevaluatedItems",
        }:
            out[key] = _convert(value, refs, seen, drop_titles, False)
        elif key in {"allOf", "anyOf", "oneOf", "prefixItems"}:
            out[key] = [_convert(sub, refs, seen, drop_titles, False) for sub in value]
        elif key in {"exclusiveMinimum", "exclusiveMaximum"} and isinstance(value, bool):
            # OpenAPI 3.0's boolean form: fold it into a numeric bound.
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and bound in node:
                out[key] = as_number(node[bound])
        elif key in NUMERIC_KEYWORDS:
            out[key] = as_number(value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _tidy(node: Mapping[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    """``out``, the converted ``node``, with OpenAPI's boolean bounds, type lists, one-entry
    ``allOf`` wrappers and ``nullable`` put as portable JSON Schema says them."""
    nullable = bool(node.get("nullable"))
    if "exclusiveMinimum" in out and isinstance(node.get("exclusiveMinimum"), bool):
        out.pop("minimum", None)
    if "exclusiveMaximum" in out and isinstance(node.get("exclusiveMaximum"), bool):
        out.pop("maximum", None)

    type_ = out.get("type")
    if isinstance(type_, list):
        types = [t for t in type_ if t != "null"]
        nullable = nullable or len(types) != len(type_)
        if len(types) == 1:
            out["type"] = types[0]
        else:
            out.pop("type")
            out = _split_types(out, types)
    if len(out.get("allOf", ())) == 1 and set(out) - {"allOf"} <= {
        "description",
        "default",
        "readOnly",
        "writeOnly",
    }:
        # drf-spectacular wraps a referenced enum in allOf to attach a description.
        inner = out.pop("allOf")[0]
        out = {**inner, **out}
    if nullable:
        out = _nullable(out)
    return out


_TYPE_KEYS = {
    "string": {"minLength", "maxLength", "pattern", "format"},
    "number": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "integer": {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"},
    "array": {"items", "minItems", "maxItems", "uniqueItems", "prefixItems", "contains"},
    "object": {
        "properties",
        "required",
        "additionalProperties",
        "patternProperties",
        "minProperties",
        "maxProperties",
    },
}


def _split_types(schema: dict[str, Any], types: list[str]) -> dict[str, Any]:
    """``{"type": [a, b], ...}`` as ``{"anyOf": [{"type": a, ...}, {"type": b, ...}]}``."""
    specific = set().union(*_TYPE_KEYS.values())
    shared = {k: v for k, v in schema.items() if k not in specific}
    branches = []
    for t in types:
        branch: dict[str, Any] = {"type": t}
        branch.update({k: v for k, v in schema.items() if k in _TYPE_KEYS.get(t, set())})
        branches.append(branch)
    return {**shared, "anyOf": branches}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if "enum" in schema and None not in schema["enum"]:
        schema = {**schema, "enum": [*schema["enum"], None]}
    if "anyOf" in schema and not (set(schema) - {"anyOf", "description", "default"}):
        branches = schema["anyOf"]
        if not any(b.get("type") == "null" for b in branches):
            branches = [*branches, {"type": "null"}]
        return {**schema, "anyOf": branches}
    annotations: dict[str, Any] = {
        k: schema[k] for k in ("description", "default", "readOnly", "writeOnly") if k in schema
    }
    inner = {k: v for k, v in schema.items() if k not in annotations}
    return {**annotations, "anyOf": [inner, {"type": "null"}]}


def as_number(value: Any) -> Any:
    """A bound as a JSON number: ``Decimal("90")`` and ``"90.0"`` become ``90``, ``"0.5"``
    becomes ``0.5``; anything that is no number is left for the metaschema check to report."""
    if isinstance(value, bool | int | float):
        return value
    if isinstance(value, Decimal | str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return value
        if not number.is_finite():
            return value
        return int(number) if number == number.to_integral_value() else float(number)
    return value


_METASCHEMA = Draft202012Validator(Draft202012Validator.META_SCHEMA)


def metaschema_errors(schema: Any) -> list[str]:
    """Where ``schema`` is not valid JSON Schema 2020-12 (empty when it is), as
    ``Draft202012Validator.check_schema`` would find it, every error rather than the first.

    The answer for a schema made only of JSON's own types is remembered by a digest of the
    schema's ``repr`` (which tells a list from a tuple, ``1`` from ``1.0`` and ``True``, and keeps
    the order of keys): the system checks validate every tool's schemas each time they run,
    and the metaschema's dynamic references make one validation cost milliseconds. A schema
    holding anything else (a ``Decimal``, a lazy string, a subclass) is validated each time.
    """
    try:
        orjson.dumps(schema, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:
        return _metaschema_errors(schema)
    key = hashlib.blake2b(repr(schema).encode(), digest_size=16).digest()
    known = _KNOWN_ERRORS.get(key)
    if known is None:
        known = tuple(_metaschema_errors(schema))
        if len(_KNOWN_ERRORS) >= _KNOWN_LIMIT:
            _KNOWN_ERRORS.clear()
        _KNOWN_ERRORS[key] = known
    return list(known)


# What metaschema_errors found, by a digest of the repr of a schema of JSON types (a long
# choice list's schema prints tens of kilobytes); emptied when full.
_KNOWN_ERRORS: dict[bytes, tuple[str, ...]] = {}
_KNOWN_LIMIT = 4096


def _metaschema_errors(schema: Any) -> list[str]:
    return [
        f"{'/'.join(str(p) for p in error.absolute_path) or '(root)'}: {error.message}"
        for error in sorted(_METASCHEMA.iter_errors(schema), key=lambda e: list(e.absolute_path))
    ]


# drf-spectacular's generated description of a choice list: one "* `value` - Label" line per
# choice, after the field's own help text.
_CHOICE_LINE = re.compile(r"^\* `.*` - .*$", re.MULTILINE)


def compact_choices(schema: Any, *, limit: int, output: bool) -> Any:
    """``schema`` with its long choice lists (more than ``limit`` values) made compact.

    In an input schema such a list stays as ``enum`` (the values a model must pick from),
    once: a later property with the same list says which property lists them instead. The
    generated markdown list of the same values is dropped from the description. In an
    output schema the list is dropped and the type stays: the values are data to read,
    not choices to make.
    """
    seen: dict[tuple[Any, ...], str] = {}
    return _compact(schema, limit, output, seen, "")


def _compact(
    node: Any, limit: int, output: bool, seen: dict[tuple[Any, ...], str], where: str
) -> Any:
    if isinstance(node, list):
        return [_compact(item, limit, output, seen, where) for item in node]
    if not isinstance(node, Mapping):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in {"properties", "patternProperties"} and isinstance(value, Mapping):
            out[key] = {
                name: _compact(sub, limit, output, seen, name) for name, sub in value.items()
            }
        elif isinstance(value, Mapping | list) and key != "enum":
            out[key] = _compact(value, limit, output, seen, where)
        else:
            out[key] = value
    enum = out.get("enum")
    if not isinstance(enum, list) or len([v for v in enum if v is not None]) <= limit:
        return out
    description = _CHOICE_LINE.sub("", str(out.get("description", ""))).strip()
    if description:
        out["description"] = description
    else:
        out.pop("description", None)
    # A nullable copy of the list (None appended) is the same list.
    values = tuple(repr(v) for v in enum if v is not None)
    if output:
        out.pop("enum")
    elif values in seen and seen[values] != where:
        out.pop("enum")
        listed = f"One of the values listed for {seen[values]}."
        out["description"] = f"{description} {listed}".strip()
    else:
        seen.setdefault(values, where)
    if "type" not in out and "enum" not in out:
        kinds = {type(v) for v in enum if v is not None}
        if kinds == {str}:
            out["type"] = "string"
    return out


def has_ref_or_type_array(schema: Any) -> bool:
    """True when a schema still holds a ``$ref`` or a type array anywhere (for checks)."""
    if isinstance(schema, list):
        return any(has_ref_or_type_array(s) for s in schema)
    if isinstance(schema, Mapping):
        if "$ref" in schema or isinstance(schema.get("type"), list):
            return True
        return any(has_ref_or_type_array(v) for v in schema.values())
    return False


def bound_strings(
    schema: Mapping[str, Any], names: Collection[str], max_length: int
) -> dict[str, Any]:
    """``schema`` with ``maxLength`` on every free-form string of the properties ``names``.

    Query parameters reach the database as ``LIKE`` patterns and filters; REST bounds them
    by the request line, a tool call does not. Strings limited to an ``enum`` already are
    bounded, and a tighter ``maxLength`` stays.
    """
    out = dict(schema)
    properties = dict(out.get("properties") or {})
    for name in names:
        if name in properties:
            properties[name] = _bound(properties[name], max_length)
    out["properties"] = properties
    return out


def _bound(node: Any, max_length: int) -> Any:
    if not isinstance(node, Mapping):
        return node
    out = dict(node)
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out["maxLength"] = min(int(out.get("maxLength", max_length)), max_length)
    for key in ("anyOf", "oneOf", "allOf"):
        if isinstance(out.get(key), list):
            out[key] = [_bound(branch, max_length) for branch in out[key]]
    for key in ("items", "additionalProperties"):
        if key in out:
            out[key] = _bound(out[key], max_length)
    if isinstance(out.get("properties"), Mapping):
        out["properties"] = {k: _bound(v, max_length) for k, v in out["properties"].items()}
    return out


def strings_over(value: Any, max_length: int) -> bool:
    """Whether ``value`` is, or holds (in a list or an object of lookups), a string longer
    than ``max_length``; arguments are at most ``MAX_ARGUMENT_DEPTH`` deep by now."""
    if isinstance(value, str):
        return len(value) > max_length
    if isinstance(value, list):
        return any(strings_over(item, max_length) for item in value)
    if isinstance(value, dict):
        return any(strings_over(item, max_length) for item in value.values())
    return False
