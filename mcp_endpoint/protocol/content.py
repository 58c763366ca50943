"""Content blocks, tool results, resource contents and prompt messages.

Tools, resources and prompts return these (or plain ``str``/``bytes``/``dict``, which are
wrapped for them); each knows its wire form through ``to_dict()``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, Literal


def _b64(data: bytes | str) -> str:
    if isinstance(data, str):
        return data  # already base64 text
    return base64.b64encode(data).decode("ascii")


class Content:
    """A content block in a tool result or a prompt message."""

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError(".to_dict() must be overridden")


@dataclass(frozen=True)
class Text(Content):
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True)
class Image(Content):
    """An image; ``data`` is raw bytes (or already base64 text)."""

    data: bytes | str
    mime_type: str = "image/png"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "image", "data": _b64(self.data), "mimeType": self.mime_type}


@dataclass(frozen=True)
class Audio(Content):
    """An audio clip; ``data`` is raw bytes (or already base64 text)."""

    data: bytes | str
    mime_type: str = "audio/wav"

    def to_dict(self) -> dict[str, Any]:
        return {"type": "audio", "data": _b64(self.data), "mimeType": self.mime_type}


@dataclass(frozen=True)
class ResourceContents:
    """What ``resources/read`` returns for one URI: ``text`` or ``blob`` (bytes)."""

    uri: str
    text: str | None = None
    blob: bytes | None = None
    mime_type: str | None = None
    # Metadata of these contents (an MCP App's {"ui": {"csp": ...}}), as "_meta".
    meta: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"uri": self.uri}
        if self.mime_type:
            body["mimeType"] = self.mime_type
        if self.blob is not None:
            body["blob"] = _b64(self.blob)
        else:
            body["text"] = self.text or ""
        if self.meta:
            body["_meta"] = self.meta
        return body


@dataclass(frozen=True)
class EmbeddedResource(Content):
    resource: ResourceContents

    def to_dict(self) -> dict[str, Any]:
        return {"type": "resource", "resource": self.resource.to_dict()}


@dataclass(frozen=True)
class ResourceLink(Content):
    uri: str
    name: str
    description: str | None = None
    mime_type: str | None = None

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"type": "resource_link", "uri": self.uri, "name": self.name}
        if self.description:
            body["description"] = self.description
        if self.mime_type:
            body["mimeType"] = self.mime_type
        return body


@dataclass
class ToolResult:
    """A complete ``tools/call`` result; a tool may return one to say exactly what it means."""

    content: list[Content] = field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "content": [block.to_dict() for block in self.content],
            "isError": self.is_error,
        }
        if self.structured is not None:
            body["structuredContent"] = self.structured
        return body


def compact_json(data: Any) -> str:
    """``data`` as JSON text without spaces, non-ASCII kept, what JSON lacks as ``str``."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def as_result(value: Any) -> ToolResult:
    """Whatever a tool returned, as a :class:`ToolResult`: a result as it is, content
    blocks as its content, text as a text block, None as no content; a dataclass or any
    other JSON value as its compact JSON text, and a dict as the structured result too."""
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, Content):
        return ToolResult(content=[value])
    if isinstance(value, str):
        return ToolResult(content=[Text(value)])
    if isinstance(value, list | tuple) and all(isinstance(v, Content) for v in value):
        return ToolResult(content=list(value))
    if value is None:
        return ToolResult(content=[])
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if isinstance(value, dict):
        return ToolResult(content=[Text(compact_json(value))], structured=value)
    return ToolResult(content=[Text(compact_json(value))])


@dataclass(frozen=True)
class Message:
    """A prompt message: ``role`` and one content block (a ``str`` becomes text)."""

    content: Content | str
    role: Literal["user", "assistant"] = "user"

    def to_dict(self) -> dict[str, Any]:
        block = Text(self.content) if isinstance(self.content, str) else self.content
        return {"role": self.role, "content": block.to_dict()}
