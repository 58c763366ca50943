"""``manage.py mcp_tools``: the tools a user, or a set of scopes, would see in ``tools/list``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.contrib.auth.models import AnonymousUser
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import get_resolver

from mcp_endpoint.credential import Credential
from mcp_endpoint.endpoint import Endpoint, endpoints
from mcp_endpoint.management.commands.mcp_key import check_scopes, find_user
from mcp_endpoint.protocol.server import RequestContext

# How each annotation hint reads in the summary, by value; a hint absent here, or a value
# not listed, is left out.
HINTS: dict[str, dict[bool, str]] = {
    "readOnlyHint": {True: "read-only"},
    "destructiveHint": {True: "destructive", False: "non-destructive"},
    "idempotentHint": {True: "idempotent"},
    "openWorldHint": {True: "open-world", False: "closed-world"},
}


class Command(BaseCommand):
    help = "Print the tools a user or a set of scopes would see on an MCP endpoint."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--user",
            default=None,
            help="The user to list tools for, by the user model's USERNAME_FIELD.",
        )
        parser.add_argument(
            "--scopes",
            default=None,
            help='Space-separated scopes the credential holds ("read"); '
            "without it, the credential carries no scopes and nothing is hidden.",
        )
        parser.add_argument(
            "--endpoint",
            default=None,
            help="The name of the endpoint (default: the one of mcp_endpoint.site).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        endpoint = find_endpoint(options["endpoint"])
        user = find_user(options["user"]) if options["user"] else AnonymousUser()
        scopes = None
        if options["scopes"] is not None:
            scopes = frozenset(check_scopes(options["scopes"]))
        context = RequestContext(credential=Credential(user=user, auth=None, scopes=scopes))
        tools = endpoint.features.list_tools(context)
        who = user.get_username() if user.is_authenticated else "anyone"
        held = (
            "any scope"
            if scopes is None
            else ("scopes " + " ".join(sorted(scopes)) if scopes else "no scopes")
        )
        self.stdout.write(
            f"{len(tools)} tool(s) on endpoint {endpoint.name!r} for {who} with {held}:"
        )
        rows = []
        for tool in tools:
            registered = endpoint.tools.get(tool["name"])
            required = sorted(registered.required_scopes) if registered else []
            rows.append(
                [
                    tool["name"],
                    f"[{summarize(tool.get('annotations') or {})}]",
                    " ".join(required) or "-",
                    first_line(tool.get("description", "")),
                ]
            )
        widths = [max((len(row[i]) for row in rows), default=0) for i in range(3)]
        for row in rows:
            cells = [c.ljust(w) for c, w in zip(row[:3], widths, strict=True)]
            self.stdout.write("  ".join([*cells, row[3]]).rstrip())


def find_endpoint(name: str | None) -> Endpoint:
    from mcp_endpoint.sites import site

    if name is None or name == site.name:
        return site
    # Endpoints other than the default one are often made in a URL module: load it.
    get_resolver().url_patterns  # noqa: B018
    found = [e for e in list(endpoints) if e.name == name]
    if len(found) == 1:
        return found[0]
    if found:
        raise CommandError(f"More than one endpoint is named {name!r}.")
    names = sorted({e.name for e in list(endpoints)} | {site.name})
    raise CommandError(f"No endpoint is named {name!r}; the endpoints are: {', '.join(names)}.")


def summarize(annotations: Mapping[str, Any]) -> str:
    words = [
        HINTS[hint][value]
        for hint, value in annotations.items()
        if hint in HINTS and isinstance(value, bool) and value in HINTS[hint]
    ]
    if annotations.get("readOnlyHint") is True:
        # A read-only tool's destructive hint is meaningless (the spec says to ignore it).
        words = [w for w in words if w not in {"destructive", "non-destructive"}]
    return ", ".join(words) or "no hints"


def first_line(description: str) -> str:
    for line in description.splitlines():
        if line.strip():
            return line.strip()
    return ""
