"""The skills extension (``io.modelcontextprotocol/skills``): its three methods.

``skills/list`` pages through the skill entries (each a SKILL.md URI, its frontmatter and
the digest and size of every file), ``skills/get`` answers for one SKILL.md URI, and
``resources/directory/read`` lists the direct children of a skill's folder. The files
themselves are read with ``resources/read``, like any resource.
"""

from __future__ import annotations

from typing import Any, Protocol

from mcp_endpoint.protocol import jsonrpc
from mcp_endpoint.protocol.jsonrpc import ProtocolError
from mcp_endpoint.protocol.request_context import RequestContext

EXTENSION = "io.modelcontextprotocol/skills"
# The extension's settings: this server implements resources/directory/read.
SETTINGS = {"directoryRead": True}
# Results a modern client may cache, as it caches resources/list and resources/read.
CACHEABLE = frozenset({"skills/list", "skills/get"})


class SkillFeatures(Protocol):
    """What the method handlers need from the host side (a part of the server's features)."""

    def list_skills(self, context: RequestContext) -> list[dict[str, Any]]: ...

    def get_skill(self, uri: str, context: RequestContext) -> dict[str, Any]: ...

    def read_directory(self, uri: str, context: RequestContext) -> list[dict[str, Any]]: ...


class Server(Protocol):
    """The server the handlers are called by: its features, and its paging."""

    @property
    def features(self) -> SkillFeatures: ...

    def paginate(
        self, items: list[dict[str, Any]], key: str, params: dict[str, Any]
    ) -> dict[str, Any]: ...


def _uri(params: dict[str, Any]) -> str:
    uri = params.get("uri")
    if not isinstance(uri, str) or not uri:
        raise ProtocolError(jsonrpc.INVALID_PARAMS, 'Invalid params: "uri" must be a string')
    return uri


def _list(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    return server.paginate(server.features.list_skills(context), "skills", params)


def _get(server: Server, params: dict[str, Any], context: RequestContext) -> dict[str, Any]:
    return {"skill": server.features.get_skill(_uri(params), context)}


def _directory_read(
    server: Server, params: dict[str, Any], context: RequestContext
) -> dict[str, Any]:
    children = server.features.read_directory(_uri(params), context)
    return server.paginate(children, "resources", params)


METHODS = {
    "skills/list": _list,
    "skills/get": _get,
    "resources/directory/read": _directory_read,
}
