"""A skill that tells an agent what the product's resources are and how they relate.

:class:`ProductSkill` is built from what the registered viewsets already say: their
nouns and tools, the fields of their serializers (the tools' output schemas), the model
relations between them, and how lists page and filter. ``SKILL.md`` is the map (one
section per kind of object, then the relations); ``references/<plural>.md`` has each kind's
fields and tools in full, for an agent that needs them::

    site.register_router(router)
    site.product_skill("task-tracker", title="Task tracker")

It is built on first use, once the URL conf is loaded (the tools' specs need it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mcp_endpoint.rest_framework.naming import model_of
from mcp_endpoint.rest_framework.registration import ViewSetRegistration
from mcp_endpoint.rest_framework.tool import ViewSetTool
from mcp_endpoint.skills import SKILL_MD, Skill, render_skill_md

if TYPE_CHECKING:
    from mcp_endpoint.endpoint import Endpoint


@dataclass
class Kind:
    """One kind of object the product serves: a registered viewset's nouns and tools."""

    singular: str
    plural: str
    description: str
    tools: list[ViewSetTool]
    model: Any
    fields: dict[str, dict[str, Any]] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)

    @property
    def label(self) -> str:
        return self.plural.replace("_", " ")

    @property
    def reference(self) -> str:
        return f"references/{self.plural}.md"


@dataclass(frozen=True)
class Relation:
    """A field of one kind that names an object of another (a task's ``project``)."""

    source: Kind
    field_name: str
    target: Kind
    many: bool


class ProductSkill(Skill):
    """The skill describing an endpoint's viewset tools.

    ``name`` is the skill's name (lowercase, hyphens); ``title`` the product's name in the
    text; ``description`` the frontmatter's, which tells a host when to load it;
    ``guidance`` more Markdown for the end of ``SKILL.md`` (the product's own rules).
    """

    # Its tools' specs are built from schemas that may read the database.
    needs_database = True

    def __init__(
        self,
        endpoint: Endpoint,
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        guidance: str = "",
        scopes: Iterable[str] = (),
    ) -> None:
        super().__init__(name, scopes=scopes)
        self.endpoint = endpoint
        self.title = title or endpoint.settings.SERVER_TITLE or name.replace("-", " ").title()
        self.description = description or (
            f"What {self.title}'s objects are, how they relate, and which tools read and "
            "change them. Load it before working with its data through these tools."
        )
        self.guidance = guidance

    # -- what the registrations know ---------------------------------------------------

    def kinds(self) -> list[Kind]:
        kinds = []
        for registration in self.endpoint.registrations:
            if not isinstance(registration, ViewSetRegistration):
                continue
            registration.build()
            tools = [t for t in registration.tools if t.spec is not None]
            if not tools:
                continue
            doc = (registration.viewset.__doc__ or "").strip().split("\n\n")[0]
            kind = Kind(
                singular=registration.singular,
                plural=registration.plural,
                description=" ".join(doc.split()),
                tools=tools,
                model=model_of(registration.viewset),
            )
            kind.fields, kind.required = object_fields(tools)
            kinds.append(kind)
        return kinds

    def relations(self, kinds: list[Kind]) -> list[Relation]:
        by_model = {k.model: k for k in kinds if k.model is not None}
        found = []
        for kind in kinds:
            if kind.model is None:
                continue
            for model_field in kind.model._meta.get_fields():
                # Only the fields the API shows: the serializer decides, not the model.
                if not model_field.is_relation or model_field.name not in kind.fields:
                    continue
                target = by_model.get(model_field.related_model)
                if target is None:
                    continue
                many = bool(model_field.many_to_many or model_field.one_to_many)
                found.append(Relation(kind, model_field.name, target, many))
        return found

    # -- the files -----------------------------------------------------------------------

    def build(self) -> Mapping[str, str]:
        kinds = self.kinds()
        relations = self.relations(kinds)
        files = {SKILL_MD: self.skill_md(kinds, relations)}
        for kind in kinds:
            files[kind.reference] = reference(kind, relations)
        return files

    def skill_md(self, kinds: list[Kind], relations: list[Relation]) -> str:
        lines = [
            f"# {self.title}",
            "",
            f"{self.title}'s REST API is served here as tools: each tool runs the same view "
            "as its REST call, with the same permissions, validation and data. You see only "
            "what the credential's user may see.",
            "",
            "## Objects",
            "",
        ]
        for kind in kinds:
            about = f" {kind.description}" if kind.description else ""
            lines.append(f"### {kind.label.capitalize()}")
            lines.append("")
            if about:
                lines.append(about.strip())
                lines.append("")
            names = ", ".join(f"`{n}`" for n in list(kind.fields)[:12])
            if names:
                lines.append(f"Fields: {names}.")
            lines.append("Tools: " + ", ".join(f"`{t.name}`" for t in kind.tools) + ".")
            lines.append(f"Every field and tool: [{kind.reference}]({kind.reference}).")
            lines.append("")
        if relations:
            lines += ["## How they relate", ""]
            for relation in relations:
                lines.append(relation_line(relation))
            lines.append("")
        lines += ["## Working with them", "", *working_rules(kinds)]
        if self.guidance.strip():
            lines += ["", self.guidance.strip()]
        frontmatter = {"name": self.name, "description": self.description}
        return render_skill_md(frontmatter, "\n".join(lines))


def object_fields(tools: list[ViewSetTool]) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """The fields of the objects a kind's tools answer with: the retrieve tool's output
    schema, else a list tool's items, else the first tool that has one."""
    ordered = sorted(tools, key=lambda t: (t.action != "retrieve", t.action != "list"))
    for tool in ordered:
        spec = tool.spec
        schema = spec.output_schema if spec is not None else None
        if not schema:
            continue
        if spec is not None and spec.action == "list":
            items = (schema.get("properties", {}).get("results") or {}).get("items")
            schema = items if isinstance(items, dict) else None
        if schema and isinstance(schema.get("properties"), dict):
            fields = {
                name: with_choices(name, value, tools)
                for name, value in schema["properties"].items()
            }
            return fields, set(schema.get("required", ()))
    return {}, set()


def with_choices(name: str, schema: Any, tools: list[ViewSetTool]) -> dict[str, Any]:
    """A field's output schema, with the choices a tool's input gives it (an answer's
    schema often says only "string" where the body's lists the values)."""
    found = dict(schema) if isinstance(schema, Mapping) else {}
    if "enum" in found:
        return found
    # A body's choices are the field's own; a list filter's may be sorted or narrowed.
    for tool in sorted(tools, key=lambda t: t.action == "list"):
        given = (tool.spec.input_schema.get("properties") or {}).get(name) if tool.spec else None
        if isinstance(given, Mapping) and isinstance(given.get("enum"), list):
            found["enum"] = given["enum"]
            break
    return found


def relation_line(relation: Relation) -> str:
    source, target = relation.source, relation.target
    finder = next((t.name for t in target.tools if t.action == "retrieve"), None)
    read = f"; read it with `{finder}`" if finder else ""
    if relation.many:
        return (
            f"- A {source.singular.replace('_', ' ')}'s `{relation.field_name}` lists "
            f"{target.label} by id{read}."
        )
    return (
        f"- A {source.singular.replace('_', ' ')} belongs to a "
        f"{target.singular.replace('_', ' ')}: `{relation.field_name}` is its id{read}."
    )


def working_rules(kinds: list[Kind]) -> list[str]:
    rules = [
        "- Find an object with its list tool, then pass its `id` to the others.",
    ]
    paged = sorted({a for k in kinds for t in k.tools if t.spec for a in t.spec.page_arguments})
    if paged:
        names = ", ".join(f"`{a}`" for a in paged)
        rules.append(f"- Lists come a page at a time: ask for the next with {names}.")
    filtered = [
        k.label
        for k in kinds
        for t in k.tools
        if t.spec
        and t.action == "list"
        and set(t.spec.query_arguments) - set(t.spec.page_arguments)
    ]
    if filtered:
        rules.append(
            f"- The lists of {', '.join(dict.fromkeys(filtered))} take filters: narrow them "
            "rather than reading every page."
        )
    if any(t.read_only is False for k in kinds for t in k.tools):
        rules.append(
            "- A tool that changes data says so in its annotations; one marked destructive "
            "asks before it runs. Read an object back to confirm a change."
        )
    rules.append(
        "- A tool error with a `code` says what went wrong (`not_found`, `validation_error`, "
        "`permission_denied`); fix the arguments rather than retrying unchanged."
    )
    return rules


def reference(kind: Kind, relations: list[Relation]) -> str:
    lines = [f"# {kind.label.capitalize()}", ""]
    if kind.description:
        lines += [kind.description, ""]
    if kind.fields:
        lines += ["## Fields", "", "| field | type | about |", "| --- | --- | --- |"]
        for name, schema in kind.fields.items():
            about = " ".join(str(schema.get("description") or "").split())
            if schema.get("readOnly"):
                about = (about + " (read-only)").strip()
            if name in kind.required:
                about = (about + " (always present)").strip()
            lines.append(f"| `{name}` | {type_of(schema)} | {about.replace('|', '/')} |")
        lines.append("")
    linked = [r for r in relations if r.source is kind or r.target is kind]
    if linked:
        lines += ["## Relations", ""]
        lines += [relation_line(r) for r in linked]
        lines.append("")
    lines += ["## Tools", ""]
    for tool in kind.tools:
        spec = tool.spec
        summary = (spec.description if spec else "").strip().split("\n")[0]
        arguments = sorted((spec.input_schema.get("properties") or {}) if spec else {})
        takes = f" Arguments: {', '.join(f'`{a}`' for a in arguments)}." if arguments else ""
        lines.append(f"- `{tool.name}`: {summary}{takes}")
    return "\n".join(lines).rstrip() + "\n"


def type_of(schema: Mapping[str, Any]) -> str:
    for combined in ("anyOf", "oneOf"):
        options = schema.get(combined)
        if isinstance(options, list):
            types = [
                type_of(o) for o in options if isinstance(o, Mapping) and o.get("type") != "null"
            ]
            nullable = any(isinstance(o, Mapping) and o.get("type") == "null" for o in options)
            return " or ".join(types + (["null"] if nullable else [])) or "any"
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = " or ".join(str(k) for k in kind)
    if "enum" in schema:
        values = ", ".join(f"`{v}`" for v in schema["enum"] if v is not None)
        return f"one of {values}"
    if schema.get("format"):
        return f"{kind} ({schema['format']})"
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"list of {type_of(schema['items'])}"
    return str(kind or "any")
