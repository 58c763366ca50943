"""mcp_endpoint.schema.portable(): the JSON Schema subset every major client accepts."""

from __future__ import annotations

import copy
import datetime
import enum
from decimal import Decimal
from typing import Any, Literal

import pydantic
import pytest
from jsonschema import Draft202012Validator

from mcp_endpoint.schema import (
    SchemaError,
    as_number,
    compact_choices,
    has_ref_or_type_array,
    metaschema_errors,
    portable,
)

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = pytest.mark.once


def is_portable(schema: Any) -> None:
    """No reference or type array is left, the root is an object, and 2020-12 accepts it."""
    assert not has_ref_or_type_array(schema), schema
    assert "$defs" not in str(schema)
    Draft202012Validator.check_schema(schema)


# -- references ----------------------------------------------------------------------------------


def test_local_defs_are_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"owner": {"$ref": "#/$defs/User"}},
        "$defs": {"User": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    out = portable(schema)
    assert out == {
        "type": "object",
        "properties": {"owner": {"type": "object", "properties": {"name": {"type": "string"}}}},
    }
    is_portable(out)


def test_legacy_definitions_are_inlined() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"$ref": "#/definitions/N"}},
        "definitions": {"N": {"type": "integer"}},
    }
    assert portable(schema) == {"type": "object", "properties": {"n": {"type": "integer"}}}


def test_openapi_components_are_inlined() -> None:
    components = {
        "Task": {
            "type": "object",
            "properties": {
                "id": {"type": "integer", "readOnly": True},
                "tags": {"type": "array", "items": {"$ref": "#/components/schemas/Tag"}},
            },
        },
        "Tag": {"type": "string", "maxLength": 20},
    }
    out = portable({"$ref": "#/components/schemas/Task"}, components)
    assert out == {
        "type": "object",
        "properties": {
            "id": {"type": "integer", "readOnly": True},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 20}},
        },
    }
    is_portable(out)


def test_definitions_may_be_keyed_by_full_reference() -> None:
    out = portable(
        {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}},
        {"#/components/schemas/A": {"type": "boolean"}},
    )
    assert out["properties"]["a"] == {"type": "boolean"}


def test_reference_siblings_win_over_the_target() -> None:
    out = portable(
        {
            "type": "object",
            "properties": {"s": {"$ref": "#/$defs/S", "description": "Which state"}},
            "$defs": {"S": {"type": "string", "description": "A state", "enum": ["a", "b"]}},
        }
    )
    assert out["properties"]["s"] == {
        "type": "string",
        "description": "Which state",
        "enum": ["a", "b"],
    }


def test_the_same_reference_twice_is_not_recursion() -> None:
    out = portable(
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/D"}, "b": {"$ref": "#/$defs/D"}},
            "$defs": {"D": {"type": "string", "format": "date"}},
        }
    )
    assert out["properties"]["a"] == out["properties"]["b"] == {"type": "string", "format": "date"}


@pytest.mark.parametrize(
    "schema",
    [
        {
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}
            },
        },
        {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {
                "A": {"type": "object", "properties": {"b": {"$ref": "#/$defs/B"}}},
                "B": {"type": "array", "items": {"$ref": "#/$defs/A"}},
            },
        },
    ],
)
def test_recursion_is_an_error(schema: dict[str, Any]) -> None:
    with pytest.raises(SchemaError, match="Recursive"):
        portable(schema)


def test_unresolved_reference_is_an_error() -> None:
    with pytest.raises(SchemaError, match="does not resolve"):
        portable({"type": "object", "properties": {"x": {"$ref": "#/$defs/Missing"}}})
    with pytest.raises(SchemaError):
        portable({"$ref": "https://example.com/schema.json"})


def test_schema_error_is_a_value_error() -> None:
    assert issubclass(SchemaError, ValueError)


def test_input_is_not_changed() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": ["string", "null"]}, "b": {"$ref": "#/$defs/B"}},
        "$defs": {"B": {"type": "integer", "nullable": True}},
    }
    before = copy.deepcopy(schema)
    out = portable(schema)
    assert schema == before
    out["properties"]["a"]["anyOf"].append({"type": "integer"})
    assert schema == before


# -- nullability and type arrays ------------------------------------------------------------------


def test_openapi_nullable() -> None:
    out = portable(
        {
            "type": "object",
            "properties": {"due": {"type": "string", "format": "date", "nullable": True}},
        }
    )
    assert out["properties"]["due"] == {
        "anyOf": [{"type": "string", "format": "date"}, {"type": "null"}]
    }
    is_portable(out)


def test_nullable_keeps_annotations_outside() -> None:
    out = portable(
        {
            "type": "integer",
            "minimum": 1,
            "nullable": True,
            "description": "How many",
            "default": None,
            "readOnly": True,
        }
    )
    assert out == {
        "description": "How many",
        "default": None,
        "readOnly": True,
        "anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}],
    }


def test_nullable_enum_gets_null() -> None:
    out = portable({"type": "string", "enum": ["open", "done"], "nullable": True})
    [branch, null] = out["anyOf"]
    assert branch["enum"] == ["open", "done", None]
    assert null == {"type": "null"}
    validator = Draft202012Validator(out)
    assert validator.is_valid(None)
    assert validator.is_valid("open")
    assert not validator.is_valid("other")


def test_nullable_enum_already_with_null_is_not_doubled() -> None:
    out = portable({"type": "string", "enum": ["a", None], "nullable": True})
    assert out["anyOf"][0]["enum"] == ["a", None]


def test_nullable_referenced_enum_in_all_of() -> None:
    # drf-spectacular's shape for a nullable choice field with a description.
    out = portable(
        {
            "type": "object",
            "properties": {
                "status": {
                    "allOf": [{"$ref": "#/components/schemas/StatusEnum"}],
                    "nullable": True,
                    "description": "Where it stands",
                }
            },
        },
        {"StatusEnum": {"type": "string", "enum": ["open", "done"]}},
    )
    status = out["properties"]["status"]
    assert status["description"] == "Where it stands"
    assert status["anyOf"] == [{"type": "string", "enum": ["open", "done", None]}, {"type": "null"}]
    is_portable(out)


def test_single_all_of_is_unwrapped() -> None:
    out = portable(
        {"allOf": [{"$ref": "#/$defs/E"}], "description": "d", "$defs": {"E": {"type": "string"}}}
    )
    assert out == {"type": "string", "description": "d"}


def test_type_array_with_null() -> None:
    out = portable({"type": ["string", "null"], "maxLength": 5})
    assert out == {"anyOf": [{"type": "string", "maxLength": 5}, {"type": "null"}]}
    is_portable(out)


def test_type_array_of_several_types_is_split() -> None:
    out = portable(
        {
            "type": ["string", "integer", "null"],
            "minLength": 2,
            "minimum": 3,
            "description": "A name or a number",
        }
    )
    assert out == {
        "description": "A name or a number",
        "anyOf": [
            {"type": "string", "minLength": 2},
            {"type": "integer", "minimum": 3},
            {"type": "null"},
        ],
    }
    validator = Draft202012Validator(out)
    assert validator.is_valid("ab") and validator.is_valid(3) and validator.is_valid(None)
    assert not validator.is_valid("a") and not validator.is_valid(2)


def test_type_array_without_null() -> None:
    out = portable({"type": ["number", "boolean"]})
    assert out == {"anyOf": [{"type": "number"}, {"type": "boolean"}]}


def test_type_array_of_one() -> None:
    assert portable({"type": ["object"]}) == {"type": "object"}


def test_type_array_deep_inside() -> None:
    out = portable(
        {
            "type": "object",
            "properties": {
                "rows": {
                    "type": "array",
                    "items": {"type": "object", "properties": {"v": {"type": ["integer", "null"]}}},
                }
            },
            "additionalProperties": {"type": ["string", "null"]},
        }
    )
    assert out["properties"]["rows"]["items"]["properties"]["v"] == {
        "anyOf": [{"type": "integer"}, {"type": "null"}]
    }
    assert out["additionalProperties"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    is_portable(out)


# -- OpenAPI 3.0 leftovers --------------------------------------------------------------------


def test_boolean_exclusive_minimum() -> None:
    out = portable({"type": "number", "minimum": 0, "exclusiveMinimum": True})
    assert out == {"type": "number", "exclusiveMinimum": 0}
    validator = Draft202012Validator(out)
    assert not validator.is_valid(0) and validator.is_valid(0.1)


def test_boolean_exclusive_maximum() -> None:
    out = portable({"type": "integer", "maximum": 10, "exclusiveMaximum": True})
    assert out == {"type": "integer", "exclusiveMaximum": 10}


def test_false_exclusive_bound_keeps_the_inclusive_one() -> None:
    out = portable({"type": "integer", "minimum": 1, "exclusiveMinimum": False})
    assert out == {"type": "integer", "minimum": 1}
    Draft202012Validator.check_schema(out)


def test_numeric_exclusive_bound_is_kept() -> None:
    out = portable({"type": "integer", "minimum": 1, "exclusiveMinimum": 0})
    assert out == {"type": "integer", "minimum": 1, "exclusiveMinimum": 0}


def test_vendor_keywords_and_examples_are_dropped() -> None:
    out = portable(
        {
            "type": "object",
            "title": "Task",
            "x-internal": True,
            "example": {"title": "x"},
            "examples": [{"title": "x"}],
            "deprecated": False,
            "externalDocs": {"url": "https://example.com"},
            "xml": {"name": "task"},
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "properties": {
                "title": {"type": "string", "title": "Title", "x-order": 1, "example": "Fix"},
                "example": {"type": "string"},
                "x-thing": {"type": "integer"},
            },
        }
    )
    # Keywords go; properties that happen to share their names stay.
    assert out == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "example": {"type": "string"},
            "x-thing": {"type": "integer"},
        },
    }
    is_portable(out)


def test_titles_kept_on_request() -> None:
    out = portable(
        {"type": "object", "title": "Root", "properties": {"a": {"type": "string", "title": "A"}}},
        drop_titles=False,
    )
    assert out["title"] == "Root"
    assert out["properties"]["a"]["title"] == "A"


def test_other_keywords_pass_through() -> None:
    schema = {
        "type": "object",
        "properties": {
            "email": {"type": "string", "format": "email", "pattern": "@"},
            "tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "string"}]},
            "choice": {"oneOf": [{"type": "integer"}, {"const": "auto"}]},
            "odd": {"not": {"multipleOf": 2}},
        },
        "required": ["email"],
        "additionalProperties": False,
        "minProperties": 1,
    }
    out = portable(schema)
    assert out == schema
    is_portable(out)


# -- pydantic, as function tools use it ------------------------------------------------------


class Colour(enum.Enum):
    RED = "red"
    GREEN = "green"


class Address(pydantic.BaseModel):
    street: str
    city: str = pydantic.Field(description="The city")


class Person(pydantic.BaseModel):
    name: str
    born: datetime.date | None = None
    home: Address
    others: list[Address] = []
    colour: Colour | None = None
    mode: Literal["a", "b"] = "a"
    score: float | int = 0


def test_pydantic_model() -> None:
    out = portable(Person.model_json_schema())
    is_portable(out)
    props = out["properties"]
    assert props["home"]["properties"]["city"] == {"type": "string", "description": "The city"}
    assert props["others"]["items"]["required"] == ["street", "city"]
    assert props["born"]["anyOf"] == [{"type": "string", "format": "date"}, {"type": "null"}]
    assert props["colour"]["anyOf"][0]["enum"] == ["red", "green"]
    assert props["mode"]["enum"] == ["a", "b"]
    validator = Draft202012Validator(out)
    assert validator.is_valid({"name": "A", "home": {"street": "S", "city": "C"}, "colour": None})
    assert not validator.is_valid({"name": "A", "home": {"street": "S"}})


def test_recursive_pydantic_model_is_an_error() -> None:
    class Tree(pydantic.BaseModel):
        children: list[Tree] = []

    with pytest.raises(SchemaError):
        portable(Tree.model_json_schema())


# -- every output is valid JSON Schema 2020-12 ------------------------------------------------

CASES: list[tuple[dict[str, Any], dict[str, Any] | None]] = [
    ({"type": "object"}, None),
    ({"type": ["string", "null"], "format": "uuid", "nullable": True}, None),
    ({"type": "string", "enum": ["a"], "nullable": True, "description": "d"}, None),
    ({"type": "number", "maximum": 5, "exclusiveMaximum": True, "x-a": 1}, None),
    ({"$ref": "#/components/schemas/P"}, {"P": {"type": "object", "nullable": True}}),
    (
        {"type": "object", "properties": {"p": {"$ref": "#/components/schemas/P"}}},
        {"P": {"type": ["array", "null"], "items": {"type": ["integer", "string"]}}},
    ),
    ({"anyOf": [{"type": "string"}, {"type": "integer"}], "nullable": True}, None),
    ({"type": ["object", "array"], "properties": {"a": {}}, "items": {}, "title": "t"}, None),
    (Person.model_json_schema(), None),
]


@pytest.mark.parametrize(("schema", "definitions"), CASES)
def test_output_validates_against_the_metaschema(
    schema: dict[str, Any], definitions: dict[str, Any] | None
) -> None:
    out = portable(schema, definitions)
    is_portable(out)


def test_has_ref_or_type_array() -> None:
    assert has_ref_or_type_array({"properties": {"a": {"$ref": "#/x"}}})
    assert has_ref_or_type_array({"anyOf": [{"type": ["string", "null"]}]})
    assert has_ref_or_type_array([{"$ref": "#/x"}])
    assert not has_ref_or_type_array({"type": "object", "properties": {"a": {"type": "string"}}})


# -- numbers stay numbers --------------------------------------------------------------------


def test_decimal_bounds_become_numbers() -> None:
    # What drf-spectacular gives per operation for a DecimalField(min_value=-90, max_value=90).
    schema = {
        "type": "number",
        "format": "double",
        "maximum": Decimal("90"),
        "minimum": Decimal("-90.5"),
        "multipleOf": Decimal("0.000001"),
        "nullable": True,
    }
    out = portable(schema)
    assert out == {
        "anyOf": [
            {
                "type": "number",
                "format": "double",
                "maximum": 90,
                "minimum": -90.5,
                "multipleOf": 0.000001,
            },
            {"type": "null"},
        ]
    }
    assert metaschema_errors(out) == []


def test_bounds_encoded_as_strings_become_numbers() -> None:
    schema = {"type": "object", "properties": {"lat": {"type": "number", "maximum": "90.0"}}}
    assert metaschema_errors(schema)  # as the raw output came: invalid 2020-12
    out = portable(schema)
    assert out["properties"]["lat"]["maximum"] == 90
    assert isinstance(out["properties"]["lat"]["maximum"], int)
    assert metaschema_errors(out) == []


def test_boolean_exclusive_bound_from_a_decimal() -> None:
    out = portable({"type": "number", "minimum": Decimal("0"), "exclusiveMinimum": True})
    assert out == {"type": "number", "exclusiveMinimum": 0}


@pytest.mark.parametrize(
    ("value", "number"),
    [(Decimal("90"), 90), ("90.0", 90), ("0.5", 0.5), (3, 3), (2.5, 2.5), ("-1", -1)],
)
def test_as_number(value: Any, number: Any) -> None:
    assert as_number(value) == number
    assert type(as_number(value)) is type(number)


@pytest.mark.parametrize("value", ["ninety", "NaN", "Infinity", True, None])
def test_as_number_leaves_what_is_no_number(value: Any) -> None:
    assert as_number(value) is value or as_number(value) == value


def test_metaschema_errors_name_every_place() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "number", "maximum": "9"}, "b": {"type": "strung"}},
    }
    errors = metaschema_errors(schema)
    assert len(errors) == 2
    assert errors[0].startswith("properties/a/maximum: ")
    assert errors[1].startswith("properties/b/type: ")


def test_a_remembered_answer_is_the_answer_of_the_schema_as_it_is_now() -> None:
    # The checks validate the same schemas each time they run: an answer is remembered,
    # but never for a schema that merely prints like another, nor after a change.
    listed = {"type": "object", "required": ["a"]}
    tupled = {"type": "object", "required": ("a",)}  # a tuple is no JSON array
    for _ in range(2):
        assert metaschema_errors(listed) == []
        assert metaschema_errors(tupled) == ["required: ('a',) is not of type 'array'"]
    listed["required"] = "a"
    assert metaschema_errors(listed) == ["required: 'a' is not of type 'array'"]
    assert metaschema_errors({"type": "number", "maximum": 1.0}) == []
    assert metaschema_errors({"type": "number", "maximum": True}) != []


def test_the_remembered_answers_are_forgotten_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    from mcp_endpoint import schema as schema_module

    monkeypatch.setattr(schema_module, "_KNOWN_LIMIT", 2)
    monkeypatch.setattr(schema_module, "_KNOWN_ERRORS", {})
    bounds = [{"type": "number", "maximum": n} for n in range(5)]
    for bound in bounds:
        assert metaschema_errors(bound) == []
        assert len(schema_module._KNOWN_ERRORS) <= 2
    assert metaschema_errors({"type": "number", "maximum": "9"}) != []


def test_a_schema_of_other_types_is_validated_each_time() -> None:
    class Text(str):
        pass

    assert metaschema_errors({"type": "number", "maximum": Decimal("9")}) == []
    assert metaschema_errors({"type": "number", "maximum": object()}) != []
    assert metaschema_errors({"type": Text("string")}) == []
    assert metaschema_errors({"type": Text("strung")}) != []


# -- long choice lists --------------------------------------------------------------------------

ZONES = [f"Zone/{n:03d}" for n in range(600)]
GENERATED = "\n".join(f"* `{z}` - Time zone {z[-3:]}" for z in ZONES)


def zone_schema(nullable_copy: bool = True) -> dict[str, Any]:
    zone = {"type": "string", "enum": ZONES, "description": f"Where it is.\n\n{GENERATED}"}
    negated = {"anyOf": [{**zone, "enum": [*ZONES, None]}, {"type": "null"}]}
    return {
        "type": "object",
        "properties": {
            "time_zone": zone,
            "time_zone__n": negated if nullable_copy else zone,
            "status": {
                "type": "string",
                "enum": ["active", "retired"],
                "description": "* `active` - Active\n* `retired` - Retired",
            },
        },
    }


def test_a_long_choice_list_is_listed_once_per_input_schema() -> None:
    out = compact_choices(zone_schema(), limit=50, output=False)
    first, second = out["properties"]["time_zone"], out["properties"]["time_zone__n"]
    assert first == {"type": "string", "enum": ZONES, "description": "Where it is."}
    assert second == {
        "anyOf": [
            {
                "type": "string",
                "description": "Where it is. One of the values listed for time_zone.",
            },
            {"type": "null"},
        ]
    }
    assert str(out).count("Zone/599") == 1
    assert metaschema_errors(out) == []


def test_a_short_choice_list_keeps_its_labels() -> None:
    out = compact_choices(zone_schema(), limit=50, output=False)
    assert out["properties"]["status"] == zone_schema()["properties"]["status"]


def test_no_long_choice_list_in_an_output_schema() -> None:
    out = compact_choices(zone_schema(nullable_copy=False), limit=50, output=True)
    assert out["properties"]["time_zone"] == {"type": "string", "description": "Where it is."}
    assert "Zone/" not in str(out)
    assert out["properties"]["status"]["enum"] == ["active", "retired"]


def test_the_limit_is_a_count_of_values() -> None:
    schema = zone_schema()
    assert compact_choices(schema, limit=600, output=True) == schema
    assert compact_choices(schema, limit=599, output=True) != schema


def test_a_list_without_a_type_gets_one_when_its_values_go() -> None:
    schema = {"enum": ZONES}
    assert compact_choices(schema, limit=50, output=True) == {"type": "string"}
