"""``manage.py mcp_doctor [URL]``: check a deployment the way an MCP client meets it.

Without a URL it checks the host's own URLconf in process, through Django's test client.
Each finding prints with its id, a hint and a link to the docs; the exit status is 1 when
any finding is an error. This app's ``check --deploy`` messages are included.
"""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import NoReverseMatch, reverse

from mcp_endpoint.doctor import DjangoClientHTTP, Doctor, Finding, URLLibHTTP, deploy_findings


def local_url(host: str | None, secure: bool) -> str:
    """The default endpoint's URL on ``host`` (the first concrete ALLOWED_HOSTS entry)."""
    from mcp_endpoint.sites import site

    if host is None:
        concrete = [h for h in settings.ALLOWED_HOSTS if h and not h.startswith((".", "*"))]
        host = concrete[0] if concrete else "localhost"
    try:
        path = reverse(f"{site.name}:endpoint")
    except NoReverseMatch as exc:
        raise CommandError(
            'The default endpoint is not mounted: add path("mcp", site.urls) to the URLconf.'
        ) from exc
    return f"{'https' if secure else 'http'}://{host}{path.rstrip('/') or '/'}"


def task_arguments(text: str) -> dict[str, Any]:
    """``--arguments``: a JSON object, or a clear error."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CommandError(f"--arguments is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise CommandError("--arguments must be a JSON object, such as '{\"project_id\": 1}'.")
    return value


class Command(BaseCommand):
    help = (
        "Check an MCP endpoint as a client does: the 401 challenge, OAuth metadata, "
        "registration and PKCE; with --key or --token, both protocol eras, tools/list and "
        "every tool's schema; CORS; and this app's deploy checks."
    )
    requires_system_checks: list[str] = []

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "url", nargs="?", help="The endpoint's URL; without it, the local URLconf."
        )
        auth = parser.add_mutually_exclusive_group()
        auth.add_argument("--key", help="An API key, for the checks that need a credential.")
        auth.add_argument("--token", help="An OAuth access token, the same way.")
        parser.add_argument(
            "--public-url",
            help="The URL users type, when URL is the server behind a proxy: requests carry "
            "the X-Forwarded-Proto and X-Forwarded-Host the proxy adds.",
        )
        parser.add_argument("--host", help="Without URL: the Host to use (default: ALLOWED_HOSTS).")
        parser.add_argument("--https", action="store_true", help="Without URL: as https.")
        parser.add_argument(
            "--task",
            metavar="TOOL",
            help="With a credential: run this long-running tool as a task, to its end.",
        )
        parser.add_argument(
            "--arguments",
            default="{}",
            help='With --task: the tool\'s arguments, a JSON object (default "{}").',
        )
        parser.add_argument(
            "--task-seconds",
            type=float,
            default=60.0,
            help="With --task: how long the task may take (default 60).",
        )
        parser.add_argument(
            "--subscribe",
            metavar="URI",
            help="With a credential: listen to this resource (subscriptions/listen) and "
            "see the stream held open.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["url"]:
            doctor = Doctor(URLLibHTTP(), options["url"])
        else:
            doctor = Doctor(DjangoClientHTTP(), local_url(options["host"], options["https"]))
        doctor.credential = options["key"] or options["token"]
        if (options["task"] or options["subscribe"]) and not doctor.credential:
            raise CommandError("--task and --subscribe need a credential: --key or --token.")
        doctor.task_tool = options["task"]
        doctor.task_arguments = task_arguments(options["arguments"])
        if not options["task_seconds"] > 0:
            raise CommandError("--task-seconds must be a positive number.")
        doctor.task_seconds = options["task_seconds"]
        doctor.subscribe_uri = options["subscribe"]
        doctor.public_url = options["public_url"]
        self.stdout.write(
            f"Checking {doctor.url}" + (f" as {doctor.resource}" if doctor.public_url else "")
        )
        findings = doctor.run() + deploy_findings()
        for what in doctor.passed:
            self.stdout.write(self.style.SUCCESS("  ok ") + what)
        for finding in findings:
            self.report(finding)
        errors = [f for f in findings if f.level == "error"]
        warnings = len(findings) - len(errors)
        summary = f"{len(errors)} error(s), {warnings} warning(s)."
        if errors:
            raise CommandError(summary)
        self.stdout.write(summary)

    def report(self, finding: Finding) -> None:
        style = self.style.ERROR if finding.level == "error" else self.style.WARNING
        self.stdout.write(style(f"  {finding.level} {finding.id}: ") + finding.message)
        if finding.hint:
            self.stdout.write(f"      hint: {finding.hint}")
        self.stdout.write(f"      docs: {finding.docs}")
