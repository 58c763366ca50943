"""Protocol revisions and the two eras they fall into."""

from __future__ import annotations

from collections.abc import Sequence

from mcp_endpoint.protocol import jsonrpc

LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)
ALL_VERSIONS: tuple[str, ...] = LEGACY_VERSIONS + MODERN_VERSIONS

# The revision a legacy request without an MCP-Protocol-Version header is taken to speak.
DEFAULT_LEGACY_HEADER_VERSION = "2025-03-26"

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

LEGACY = "legacy"
MODERN = "modern"


def is_legacy(version: str) -> bool:
    return version in LEGACY_VERSIONS


def negotiate_legacy(requested: object, supported: Sequence[str]) -> str:
    """The revision ``initialize`` answers with for a requested one.

    A supported revision is echoed. Otherwise the newest supported legacy revision at or
    below the requested date; the oldest supported one when the request is older than all;
    the newest when the request is not a date at all (the client then decides).
    """
    legacy = sorted(v for v in supported if is_legacy(v))
    if not legacy:
        return LEGACY_VERSIONS[-1]
    if isinstance(requested, str) and requested in legacy:
        return requested
    if isinstance(requested, str) and _looks_like_revision(requested):
        older = [v for v in legacy if v <= requested]
        return older[-1] if older else legacy[0]
    return legacy[-1]


def _looks_like_revision(value: str) -> bool:
    parts = value.split("-")
    return len(parts) == 3 and all(p.isdigit() for p in parts) and len(parts[0]) == 4


def era_of(message: object, header_version: str | None) -> str:
    """``MODERN`` when the body's ``_meta`` names a version or the header is not legacy."""
    if header_version is not None and not is_legacy(header_version):
        return MODERN
    if isinstance(message, dict):
        params = message.get("params")
        if isinstance(params, dict):
            meta = params.get("_meta")
            if isinstance(meta, dict) and META_PROTOCOL_VERSION in meta:
                return MODERN
    return LEGACY


# RFC 5424 severities, lowest first, as logging/setLevel and _meta logLevel name them.
LOG_LEVELS: tuple[str, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)


def unsupported_version(requested: object, supported: Sequence[str]) -> jsonrpc.ProtocolError:
    return jsonrpc.ProtocolError(
        jsonrpc.UNSUPPORTED_VERSION,
        f"Unsupported protocol version: {requested}",
        {"supported": list(supported), "requested": requested},
    )
