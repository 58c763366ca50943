"""Portable JSON Schema 2020-12 for tool schemas.

Clients differ in what they accept: some do not resolve ``$ref``, some reject type arrays
(``"type": ["string", "null"]``), all want an object root. :func:`portable` rewrites a
schema, from pydantic or from drf-spectacular's OpenAPI output, into the subset every major
client accepts: references inlined, nullability as ``anyOf`` with ``{"type": "null"}``,
OpenAPI-only keywords dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

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

    out: dict[str, Any] = {}
    nullable = bool(node.get("nullable"))
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
                out[key] = node[bound]
        else:
            out[key] = copy.deepcopy(value)
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


def has_ref_or_type_array(schema: Any) -> bool:
    """True when a schema still holds a ``$ref`` or a type array anywhere (for checks)."""
    if isinstance(schema, list):
        return any(has_ref_or_type_array(s) for s in schema)
    if isinstance(schema, Mapping):
        if "$ref" in schema or isinstance(schema.get("type"), list):
            return True
        return any(has_ref_or_type_array(v) for v in schema.values())
    return False
