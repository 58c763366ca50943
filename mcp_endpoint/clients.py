"""How each AI client connects to an endpoint: the steps, and the text to copy.

The account pages and the admin's key reveal show the same instructions, so they are built
here once. A client either signs in with OAuth (browser connectors, which cannot send a
header of their own) or sends an API key as ``Authorization: Bearer <key>``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from django.utils.translation import gettext as _

OAUTH = "oauth"
KEY = "key"


@dataclass(frozen=True)
class ClientGuide:
    """One client: its name, how it signs in, what to do, and the text to paste."""

    slug: str
    name: str
    auth: str  # OAUTH or KEY: what the steps below use
    steps: tuple[str, ...]
    snippet: str
    snippet_label: str
    also: str = ""  # the other way this client can sign in, if any

    @property
    def uses_key(self) -> bool:
        return self.auth == KEY


def server_key(name: str) -> str:
    """A configuration key for the server (``task-tracker``): lower case, dashes."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "mcp"


def client_guides(url: str, server_name: str, key: str | None = None) -> list[ClientGuide]:
    """The guides for an endpoint at ``url``; ``key`` fills the configurations that need one
    (a placeholder when it is not known, as on the connect page)."""
    name = server_key(server_name)
    secret = key or _("YOUR_API_KEY")
    bearer = f"Bearer {secret}"
    return [
        _claude_code_guide(url, name, bearer),
        *_connector_guides(url),
        *_config_file_guides(url, name, bearer),
        _inspector_guide(url, bearer),
    ]


def _claude_code_guide(url: str, name: str, bearer: str) -> ClientGuide:
    return ClientGuide(
        slug="claude-code",
        name="Claude Code",
        auth=KEY,
        steps=(_("Run this command in a terminal, then start Claude Code."),),
        snippet=(
            f'claude mcp add --transport http {name} {url} --header "Authorization: {bearer}"'
        ),
        snippet_label=_("Command"),
        also=_(
            "It can also sign in with OAuth: add the server without --header, then run "
            "/mcp in Claude Code and choose to authenticate."
        ),
    )


def _connector_guides(url: str) -> list[ClientGuide]:
    # Browser connectors sign in with OAuth: all they need is the URL.
    connectors = [
        (
            "claude",
            _("Claude (claude.ai and Claude Desktop)"),
            (
                _("Open Settings, then Connectors, and choose Add custom connector."),
                _("Paste the URL below as the server URL, and add the connector."),
                _("Choose Connect, sign in here if asked, and allow the access it asks for."),
            ),
        ),
        (
            "chatgpt",
            "ChatGPT",
            (
                _(
                    "Open Settings, then Apps & Connectors; under Advanced settings, turn on "
                    "developer mode."
                ),
                _("Create a connector with the URL below, and OAuth as its authentication."),
                _("Sign in here when ChatGPT sends you, and allow the access it asks for."),
            ),
        ),
    ]
    return [
        ClientGuide(
            slug=slug,
            name=client,
            auth=OAUTH,
            steps=steps,
            snippet=url,
            snippet_label=_("Connector URL"),
        )
        for slug, client, steps in connectors
    ]


def _config_file_guides(url: str, name: str, bearer: str) -> list[ClientGuide]:
    # Editors read the server from a JSON file: with its headers entry they send the key,
    # without it they sign in with OAuth.
    server = {"url": url, "headers": {"Authorization": bearer}}
    config_files = [
        (
            "cursor",
            "Cursor",
            _(
                "Add this to ~/.cursor/mcp.json (every project) or .cursor/mcp.json (one "
                "project), under mcpServers, then restart Cursor."
            ),
            "mcp.json",
            {"mcpServers": {name: server}},
            _("Without the headers entry, Cursor signs in with OAuth instead."),
        ),
        (
            "vscode",
            "VS Code",
            _(
                "Add this to .vscode/mcp.json in your workspace, under servers, and start "
                "the server from the file or the MCP view."
            ),
            ".vscode/mcp.json",
            {"servers": {name: {"type": "http", **server}}},
            _("Without the headers entry, VS Code signs in with OAuth instead."),
        ),
    ]
    return [
        ClientGuide(
            slug=slug,
            name=client,
            auth=KEY,
            steps=(step,),
            snippet=json.dumps(config, indent=2),
            snippet_label=path,
            also=also,
        )
        for slug, client, step, path, config, also in config_files
    ]


def _inspector_guide(url: str, bearer: str) -> ClientGuide:
    return ClientGuide(
        slug="inspector",
        name=_("MCP Inspector"),
        auth=KEY,
        steps=(
            _("Run this command; it opens the Inspector in your browser."),
            _("Choose the Streamable HTTP transport and paste the URL: %(url)s.") % {"url": url},
            _(
                "Under Authentication, send the header Authorization with the value "
                "%(value)s, then Connect."
            )
            % {"value": bearer},
        ),
        snippet="npx @modelcontextprotocol/inspector",
        snippet_label=_("Command"),
        also=_("Its Open Auth Settings button runs the OAuth sign-in instead of a key."),
    )


def guide_for(slug: str, guides: list[ClientGuide]) -> ClientGuide | None:
    return next((g for g in guides if g.slug == slug), None)
