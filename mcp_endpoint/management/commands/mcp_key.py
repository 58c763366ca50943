"""``manage.py mcp_key``: create, list and revoke API keys.

``create`` prints the raw key as its last line of output, so a script can take it with
``tail -n 1``; it is stored hashed and cannot be shown again.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from mcp_endpoint.forms import known_scopes
from mcp_endpoint.models import get_api_key_model

COLUMNS = ["prefix", "name", "user", "scopes", "created", "expires", "last used", "status"]


class Command(BaseCommand):
    help = "Create, list and revoke API keys for the MCP endpoint and the REST API."

    def add_arguments(self, parser: CommandParser) -> None:
        commands = parser.add_subparsers(
            dest="action",
            required=True,
            metavar="{create,list,revoke}",
        )
        create = commands.add_parser("create", help="Create a key and print it, once.")
        create.add_argument(
            "--user",
            required=True,
            help="The user the key acts as, by the user model's USERNAME_FIELD (a username, "
            "or an email address).",
        )
        create.add_argument(
            "--scopes",
            required=True,
            help='Space-separated scopes among django-oauth-toolkit\'s SCOPES ("read write").',
        )
        create.add_argument("--name", default="", help="A label to recognise the key by.")
        create.add_argument(
            "--expires-days", type=int, default=None, help="Days until the key expires."
        )
        listing = commands.add_parser("list", help="List keys (never their secrets).")
        listing.add_argument("--user", default=None, help="Only this user's keys.")
        revoke = commands.add_parser("revoke", help="Revoke a key by its prefix.")
        revoke.add_argument("prefix", help="The key's prefix, as `list` shows it.")

    def handle(self, *args: Any, **options: Any) -> None:
        action = options["action"]
        if action == "create":
            self.create(
                username=options["user"],
                scopes=options["scopes"],
                name=options["name"],
                expires_days=options["expires_days"],
            )
        elif action == "list":
            self.list(username=options["user"])
        else:
            self.revoke(options["prefix"])

    def create(self, *, username: str, scopes: str, name: str, expires_days: int | None) -> None:
        user = find_user(username)
        wanted = check_scopes(scopes)
        if not wanted:
            raise CommandError("Give at least one scope with --scopes.")
        expires = None
        if expires_days is not None:
            if expires_days <= 0:
                raise CommandError("--expires-days must be a positive number of days.")
            expires = timezone.now() + timedelta(days=expires_days)
        key, raw = get_api_key_model()._default_manager.create_key(
            user=user, scopes=wanted, name=name, expires=expires
        )
        until = f"until {when(key.expires)}" if key.expires else "without expiry"
        self.stdout.write(
            f"Created API key {key.prefix} ({key.name or 'no name'}) for "
            f"{user.get_username()} with scopes {key.scope}, valid {until}."
        )
        if not user.is_active:
            self.stderr.write(
                f"{user.get_username()} is inactive: the key is refused until they are active."
            )
        self.stdout.write("It is stored hashed and cannot be shown again:")
        self.stdout.write(raw)

    def list(self, *, username: str | None) -> None:
        keys = get_api_key_model()._default_manager.select_related("user").order_by("created")
        if username is not None:
            keys = keys.filter(user=find_user(username))
        rows = [
            [
                key.prefix,
                key.name or "-",
                key.user.get_username(),
                key.scope or "-",
                when(key.created),
                when(key.expires),
                when(key.last_used),
                key.status,
            ]
            for key in keys
        ]
        if not rows:
            self.stdout.write("No API keys.")
            return
        widths = [max(len(row[i]) for row in [COLUMNS, *rows]) for i in range(len(COLUMNS))]
        for row in [COLUMNS, *rows]:
            self.stdout.write(
                "  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
            )

    def revoke(self, prefix: str) -> None:
        key = get_api_key_model()._default_manager.filter(prefix=prefix).first()
        if key is None:
            raise CommandError(f"No API key has the prefix {prefix!r}.")
        if key.is_revoked():
            self.stdout.write(f"API key {key.prefix} was already revoked on {when(key.revoked)}.")
            return
        key.revoke()
        self.stdout.write(f"Revoked API key {key.prefix} of {key.user.get_username()}.")


def find_user(username: str) -> Any:
    """The user of a ``--user`` value, by natural key (the username)."""
    model = get_user_model()
    try:
        return model._default_manager.get_by_natural_key(username)
    except model.DoesNotExist as exc:
        raise CommandError(f"No user is named {username!r}.") from exc


def check_scopes(scopes: str) -> list[str]:
    """The scopes of a ``--scopes`` value, each among django-oauth-toolkit's ``SCOPES``."""
    wanted = scopes.split()
    known = known_scopes()
    unknown = [s for s in wanted if s not in known]
    if unknown:
        raise CommandError(
            f"Unknown scope(s): {' '.join(unknown)}. The known scopes "
            f"(django-oauth-toolkit's SCOPES) are: {' '.join(known)}."
        )
    return list(dict.fromkeys(wanted))


def when(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    return timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")
