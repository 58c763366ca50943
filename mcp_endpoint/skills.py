"""Skills: ``SKILL.md`` documents and their files, served as the skills extension says.

A skill (the Agent Skills format) is a directory whose ``SKILL.md`` starts with YAML
frontmatter naming and describing it. An endpoint serves each of its files as a resource
under ``skill://<skill-path>/<file-path>`` and answers ``skills/list``, ``skills/get`` and
``resources/directory/read`` (:mod:`mcp_endpoint.protocol.skills`)::

    from mcp_endpoint import site

    site.skill_directory(BASE_DIR / "skills" / "triage")    # a folder in the repository

A host registers skills as it registers tools and prompts; :class:`DirectorySkill` reads
a folder, :class:`StaticSkill` takes the text, and a subclass of :class:`Skill` can build
its files in code (the DRF adapter's :class:`~mcp_endpoint.rest_framework.skill.ProductSkill`
describes the product's resources from their schemas). Files are built once, on first use.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import mimetypes
import re
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from django.core.checks import CheckMessage, Error

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.content import ResourceContents
from mcp_endpoint.protocol.jsonrpc import ProtocolError

SCHEME = "skill://"
SKILL_MD = "SKILL.md"
DIRECTORY = "inode/directory"
MARKDOWN = "text/markdown"
# The Agent Skills naming rules: 1-64 lowercase letters, digits and single inner hyphens.
NAME = re.compile(r"^(?=.{1,64}$)[a-z0-9]+(?:-[a-z0-9]+)*$")
# What every conforming host accepts (larger skills may not load anywhere).
MAX_FILES = 512
MAX_BYTES = 16 * 1024 * 1024
# The frontmatter: a leading "---" line, YAML, then a closing "---" line.
FRONTMATTER = re.compile(r"^\ufeff?---\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|$)", re.S)
# Reserved for metadata the MCP extensions define (none yet).
RESERVED_METADATA = "io.modelcontextprotocol/"

Visible = Callable[[frozenset[str]], bool]


class SkillError(ValueError):
    """A skill whose files break the format (a system check reports it)."""


@dataclass(frozen=True)
class SkillFile:
    """One file of a skill: its path inside the skill, its bytes, and its media type."""

    path: str
    content: bytes
    mime_type: str

    @property
    def digest(self) -> str:
        return "sha256:" + hashlib.sha256(self.content).hexdigest()

    def contents(self, uri: str) -> ResourceContents:
        if self.mime_type.startswith("text/") or self.mime_type in TEXT_TYPES:
            try:
                return ResourceContents(
                    uri=uri, text=self.content.decode(), mime_type=self.mime_type
                )
            except UnicodeDecodeError:
                pass
        return ResourceContents(uri=uri, blob=self.content, mime_type=self.mime_type)


TEXT_TYPES = frozenset({"application/json", "application/x-yaml", "application/yaml"})


def media_type(path: str) -> str:
    if path.lower().endswith(".md"):
        return MARKDOWN
    guessed, _ = mimetypes.guess_type(path)
    return guessed or "application/octet-stream"


def parse_frontmatter(text: str) -> dict[str, Any]:
    """The YAML frontmatter of a ``SKILL.md`` as JSON values; :class:`SkillError` when it
    has none, or no ``name`` and ``description``."""
    found = FRONTMATTER.match(text)
    if not found:
        raise SkillError("SKILL.md does not start with --- delimited YAML frontmatter")
    try:
        data = yaml.safe_load(found.group(1))
    except yaml.YAMLError as exc:
        raise SkillError(f"SKILL.md frontmatter is not YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise SkillError("SKILL.md frontmatter is not a mapping")
    for key in ("name", "description"):
        if not isinstance(data.get(key), str) or not data[key]:
            raise SkillError(f"SKILL.md frontmatter has no {key}")
    # As JSON has it: a date is written as its ISO text, the way a JSON client reads it.
    loaded: dict[str, Any] = json.loads(json.dumps(data, default=_json_value))
    return loaded


def _json_value(value: Any) -> Any:
    if isinstance(value, datetime.date | datetime.datetime):
        return value.isoformat()
    return str(value)


def render_skill_md(frontmatter: Mapping[str, Any], body: str) -> str:
    """A ``SKILL.md``: ``frontmatter`` as YAML between ``---`` lines, then ``body``."""
    head = yaml.safe_dump(dict(frontmatter), sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n\n{body.strip()}\n"


class Skill:
    """One skill; subclasses implement :meth:`build`, which returns its files by path.

    ``path`` is the skill's place under ``skill://``: one segment (``triage``) or more
    (``acme/billing/refunds``); the last one is the skill's name and must equal the
    ``name`` of its frontmatter. ``required_scopes`` hides it from credentials without them.
    """

    path: str = ""
    required_scopes: frozenset[str] = frozenset()
    # Whether building its files reads the database (the system checks then wait for it).
    needs_database = False

    def __init__(self, path: str | None = None, *, scopes: Iterable[str] = ()) -> None:
        if path is not None:
            self.path = path.strip("/")
        self.required_scopes = frozenset(scopes)
        self._files: dict[str, SkillFile] | None = None
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.uri}>"

    def build(self) -> Mapping[str, SkillFile | str | bytes]:
        """The skill's files, by path relative to the skill (``SKILL.md``, ``references/X.md``)."""
        raise NotImplementedError(".build() must be overridden")

    # -- what it is made of ----------------------------------------------------------

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1]

    @property
    def root(self) -> str:
        return f"{SCHEME}{self.path}"

    @property
    def uri(self) -> str:
        return f"{self.root}/{SKILL_MD}"

    def files(self) -> dict[str, SkillFile]:
        """The files, built once (the first caller builds; the others wait for it)."""
        if self._files is None:
            with self._lock:
                if self._files is None:
                    self._files = self._collect()
        return self._files

    def _collect(self) -> dict[str, SkillFile]:
        files: dict[str, SkillFile] = {}
        for path, value in sorted(self.build().items()):
            path = path.strip("/")
            if isinstance(value, SkillFile):
                files[path] = value
            else:
                content = value.encode() if isinstance(value, str) else bytes(value)
                files[path] = SkillFile(path, content, media_type(path))
        return files

    def frontmatter(self) -> dict[str, Any]:
        skill_md = self.files().get(SKILL_MD)
        if skill_md is None:
            raise SkillError(f"{self.root} has no {SKILL_MD}")
        return parse_frontmatter(skill_md.content.decode("utf-8-sig"))

    def problems(self) -> list[str]:
        """What breaks the format or the limits, for the system checks."""
        try:
            frontmatter = self.frontmatter()
        except (SkillError, UnicodeDecodeError) as exc:
            return [str(exc)]
        found = []
        if not NAME.match(self.name):
            found.append(
                f"its name {self.name!r} breaks the naming rules (1-64 lowercase letters, "
                "digits and single hyphens, none first or last)"
            )
        if frontmatter["name"] != self.name:
            found.append(
                f"its path ends in {self.name!r} but its frontmatter names it "
                f"{frontmatter['name']!r}: the two must be equal"
            )
        files = self.files()
        if len(files) > MAX_FILES:
            found.append(f"it has {len(files)} files; hosts need load no more than {MAX_FILES}")
        total = sum(len(f.content) for f in files.values())
        if total > MAX_BYTES:
            found.append(f"its files hold {total} bytes; hosts need load no more than {MAX_BYTES}")
        metadata = frontmatter.get("metadata")
        if isinstance(metadata, dict):
            reserved = sorted(k for k in metadata if k.startswith(RESERVED_METADATA))
            if reserved:
                found.append(f"its metadata uses reserved keys: {', '.join(reserved)}")
        return found

    # -- what the protocol serves ----------------------------------------------------

    def entry(self) -> dict[str, Any]:
        """Its ``Skill`` entry: the SKILL.md URI, its frontmatter, and every file's digest."""
        return {
            "uri": self.uri,
            "frontmatter": self.frontmatter(),
            "resources": [
                {"uri": f"{self.root}/{f.path}", "digest": f.digest, "size": len(f.content)}
                for f in self.files().values()
            ],
        }

    def describe_files(self) -> list[dict[str, Any]]:
        """Its files as ``resources/list`` lists them; SKILL.md named and described as its
        frontmatter says."""
        frontmatter = self.frontmatter()
        described = []
        for file in self.files().values():
            body: dict[str, Any] = {"uri": f"{self.root}/{file.path}"}
            if file.path == SKILL_MD:
                body["name"] = frontmatter["name"]
                body["description"] = frontmatter["description"]
            else:
                body["name"] = file.path.rsplit("/", 1)[-1]
            body["mimeType"] = file.mime_type
            body["size"] = len(file.content)
            described.append(body)
        return described

    def read(self, uri: str) -> ResourceContents | None:
        if not uri.startswith(self.root + "/"):
            return None
        file = self.files().get(uri[len(self.root) + 1 :])
        return file.contents(uri) if file is not None else None

    def directory(self, uri: str) -> list[dict[str, Any]] | None:
        """The direct children of the directory at ``uri`` (the skill's root or one of its
        folders), or None when ``uri`` is no directory of this skill."""
        if uri == self.root:
            prefix = ""
        elif uri.startswith(self.root + "/"):
            prefix = uri[len(self.root) + 1 :] + "/"
        else:
            return None
        files = [f for f in self.files().values() if f.path.startswith(prefix)]
        if not files:
            return None
        children: dict[str, dict[str, Any]] = {}
        for file in files:
            rest = file.path[len(prefix) :]
            head, _, tail = rest.partition("/")
            child = f"{self.root}/{prefix}{head}"
            if tail:
                children.setdefault(child, {"uri": child, "name": head, "mimeType": DIRECTORY})
            else:
                children[child] = {
                    "uri": child,
                    "name": head,
                    "mimeType": file.mime_type,
                    "size": len(file.content),
                }
        return list(children.values())


class StaticSkill(Skill):
    """A skill whose ``SKILL.md`` (and any other file) is given as text or bytes."""

    def __init__(
        self,
        path: str,
        skill_md: str,
        *,
        files: Mapping[str, str | bytes] | None = None,
        scopes: Iterable[str] = (),
    ) -> None:
        super().__init__(path, scopes=scopes)
        self.given: dict[str, str | bytes] = {**(files or {}), SKILL_MD: skill_md}

    def build(self) -> Mapping[str, str | bytes]:
        return self.given


class DirectorySkill(Skill):
    """A skill read from a folder: its ``SKILL.md`` and every file below it (hidden files
    and ``__pycache__`` left out). ``path`` defaults to the folder's name."""

    def __init__(
        self, directory: str | Path, *, path: str | None = None, scopes: Iterable[str] = ()
    ) -> None:
        self.folder = Path(directory)
        super().__init__(path or self.folder.name, scopes=scopes)

    def build(self) -> Mapping[str, bytes]:
        if not (self.folder / SKILL_MD).is_file():
            raise SkillError(f"{self.folder} has no {SKILL_MD}")
        found: dict[str, bytes] = {}
        for file in sorted(self.folder.rglob("*")):
            relative = file.relative_to(self.folder)
            if any(p.startswith(".") or p == "__pycache__" for p in relative.parts):
                continue
            if file.is_file():
                found[relative.as_posix()] = file.read_bytes()
        return found


class SkillRegistry:
    """The skills of one endpoint, by path, in registration order. It is one of the
    endpoint's registrations: :meth:`check` reports what is wrong with them."""

    def __init__(self, owner: object = None) -> None:
        self.owner_endpoint = owner
        self._skills: dict[str, Skill] = {}
        self.duplicates: list[str] = []

    def check(self, *, database: bool = False) -> list[CheckMessage]:
        """Two skills at one path (E140); a skill whose files break the format (E141),
        checked once its files can be built (a product skill's need the database)."""
        messages: list[CheckMessage] = []
        for path in self.duplicates:
            messages.append(
                Error(
                    f"More than one skill is registered at skill://{path}.",
                    hint="Give one of them another path=...; the first one is served.",
                    obj=self.owner_endpoint,
                    id="mcp_endpoint.E140",
                )
            )
        for skill in self:
            if skill.needs_database and not database:
                continue
            try:
                problems = skill.problems()
            except (OSError, SkillError) as exc:
                problems = [str(exc)]
            for problem in problems:
                messages.append(
                    Error(
                        f"The skill {skill.uri} cannot be served: {problem}.",
                        hint="Fix its SKILL.md (YAML frontmatter with name and description, "
                        "the name equal to the last segment of its path) or its files.",
                        obj=self.owner_endpoint,
                        id="mcp_endpoint.E141",
                    )
                )
        return messages

    def register(self, skill: Skill) -> Skill:
        if skill.path in self._skills:
            self.duplicates.append(skill.path)
        else:
            self._skills[skill.path] = skill
        return skill

    def __iter__(self) -> Iterator[Skill]:
        return iter(list(self._skills.values()))

    def __len__(self) -> int:
        return len(self._skills)

    def get(self, uri: str, visible: Visible) -> Skill | None:
        """The skill whose SKILL.md is at ``uri``, when the caller may see it."""
        if not (uri.startswith(SCHEME) and uri.endswith("/" + SKILL_MD)):
            return None
        skill = self._skills.get(uri[len(SCHEME) : -len(SKILL_MD) - 1])
        return skill if skill is not None and visible(skill.required_scopes) else None

    def owner(self, uri: str, visible: Visible) -> Skill | None:
        """The visible skill ``uri`` lies in (its root, or a file or folder in it); the
        deepest, when skills nest."""
        if not uri.startswith(SCHEME):
            return None
        path = uri[len(SCHEME) :]
        best: Skill | None = None
        for skill in self:
            inside = path == skill.path or path.startswith(skill.path + "/")
            deeper = best is None or len(skill.path) > len(best.path)
            if inside and deeper and visible(skill.required_scopes):
                best = skill
        return best

    def entries(self, visible: Visible) -> list[dict[str, Any]]:
        return [s.entry() for s in self if visible(s.required_scopes)]

    def describe_files(self, visible: Visible) -> list[dict[str, Any]]:
        return [d for s in self if visible(s.required_scopes) for d in s.describe_files()]

    def read(self, uri: str, visible: Visible) -> ResourceContents | None:
        skill = self.owner(uri, visible)
        return skill.read(uri) if skill is not None else None

    def directory(self, uri: str, visible: Visible) -> list[dict[str, Any]] | None:
        skill = self.owner(uri, visible)
        return skill.directory(uri) if skill is not None else None


# -- what an endpoint answers --------------------------------------------------------------


def _declared(registry: SkillRegistry, method: str) -> None:
    # Without skills the extension is not declared, and its methods are unknown.
    if not len(registry):
        raise ProtocolError(jsonrpc.METHOD_NOT_FOUND, f"Method not found: {method}")


def list_skills(registry: SkillRegistry, visible: Visible) -> list[dict[str, Any]]:
    """``skills/list``: the entries of the skills this credential may see."""
    _declared(registry, "skills/list")
    return registry.entries(visible)


def get_skill(registry: SkillRegistry, uri: str, visible: Visible) -> dict[str, Any]:
    """``skills/get``: the entry of the skill whose SKILL.md is at ``uri``."""
    _declared(registry, "skills/get")
    skill = registry.get(uri, visible)
    if skill is None:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, f"No skill is served at {uri}", {"uri": uri})
    return skill.entry()


def read_directory(registry: SkillRegistry, uri: str, visible: Visible) -> list[dict[str, Any]]:
    """``resources/directory/read``: the direct children of a skill folder."""
    _declared(registry, "resources/directory/read")
    children = registry.directory(uri, visible)
    if children is None:
        raise ProtocolError(
            jsonrpc.INVALID_PARAMS, f"{uri} is not a directory resource", {"uri": uri}
        )
    return children
