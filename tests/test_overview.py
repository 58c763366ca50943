"""The call log's overview in the admin: who may see it, what it counts, where it links."""

from __future__ import annotations

import html
import re
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone, translation

from mcp_endpoint import overview
from mcp_endpoint.models import ToolCall
from tests import overview_helpers
from tests.overview_helpers import bucket_of, near

pytestmark = pytest.mark.django_db
viewer = overview_helpers.viewer  # the fixture

URL = "/admin/mcp_endpoint/toolcall/overview/"
CHANGE_LIST = "/admin/mcp_endpoint/toolcall/"


def call(
    tool: str, user: Any = None, *, ago: timedelta = timedelta(hours=1), **fields: Any
) -> ToolCall:
    row = ToolCall.objects.create(
        endpoint="mcp",
        tool=tool,
        user=user,
        outcome=fields.pop("outcome", "ok"),
        duration_ms=fields.pop("duration_ms", 10.0),
        **fields,
    )
    # auto_now_add: the time is set after the row exists.
    ToolCall.objects.filter(pk=row.pk).update(created=timezone.now() - ago)
    return row


def links(content: str, section: str) -> dict[str, str]:
    """The links of one chart of the page, by their text."""
    match = re.search(rf'<section[^>]*id="{section}".*?</section>', content, re.S)
    assert match, section
    return {
        html.unescape(text).strip(): html.unescape(href)
        for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', match.group(0))
    }


def rows_behind(client: Client, url: str) -> int:
    """How many rows the change list shows at ``url``."""
    response = client.get(url)
    assert response.status_code == 200, url
    return int(response.context["cl"].result_count)


def test_only_staff_with_the_view_permission_see_it(client: Client, viewer: Any) -> None:
    assert client.get(URL).status_code == 302  # to the admin's login
    someone = get_user_model().objects.create_user("sam", "s@example.com", "pw-sam-12345")
    someone.is_staff = True
    someone.save()
    client.force_login(someone)
    assert client.get(URL).status_code == 403
    client.force_login(viewer)
    assert client.get(URL).status_code == 200


def test_the_figures_and_their_links(admin_client: Client, alice: Any, bob: Any) -> None:
    for ms in (1, 2, 3, 4, 5, 6, 7, 8, 9, 100):
        call(
            "list_tasks",
            alice,
            duration_ms=ms,
            credential="API key “laptop” (mcp_1234abcd)",
            client_name="Claude Code",
        )
    call(
        "get_task",
        bob,
        outcome="not_found",
        duration_ms=50,
        client_name="Cursor",
        credential="OAuth “Claude” (client 9f)",
    )
    call(
        "get_task",
        bob,
        outcome="not_found",
        duration_ms=70,
        credential="OAuth “Claude” (client 9f)",
    )
    call("get_task", bob, outcome="invalid_arguments", duration_ms=30)
    call("list_tasks", alice, ago=timedelta(days=20))  # outside the default seven days

    response = admin_client.get(URL)
    assert response.status_code == 200
    figures = response.context["figures"]
    assert figures.calls == 13
    assert figures.errors == 3
    assert figures.api_keys == 1
    assert figures.oauth_apps == 1
    durations = {bar.label: (bar.value, bar.second) for bar in figures.durations}
    # Nearest rank: the 5th and the 10th of ten sorted durations; of three, the 2nd and 3rd.
    assert durations == {
        "list_tasks": (near(5.0), near(100.0)),
        "get_task": (near(50.0), near(70.0)),
    }
    assert [(bar.label, bar.value) for bar in figures.errors_by_code] == [
        ("not_found", 2),
        ("invalid_arguments", 1),
    ]
    assert [(bar.label, bar.value) for bar in figures.users] == [("alice", 10), ("bob", 3)]
    assert sum(column.total for column in figures.series.columns) == 13

    content = response.content.decode()
    expected = {
        ("chart-errors", "not_found"): 2,
        ("chart-durations", "list_tasks"): 10,
        ("chart-users", "bob"): 3,
        ("chart-clients", "Cursor"): 1,
        ("chart-credentials", "OAuth “Claude” (client 9f)"): 2,
        ("chart-calls", "get_task"): 3,
    }
    for (section, label), count in expected.items():
        url = links(content, section)[label]
        query = dict(parse_qsl(urlsplit(url).query))
        assert "created__gte" in query and "created__lt" in query
        assert rows_behind(admin_client, url) == count, (section, label, url)


def test_the_period_chooses_the_rows(admin_client: Client, alice: Any) -> None:
    call("list_tasks", alice, ago=timedelta(hours=2))
    call("list_tasks", alice, ago=timedelta(days=3))
    call("list_tasks", alice, ago=timedelta(days=40))
    counts = {
        key: admin_client.get(URL, {"period": key}).context["figures"].calls
        for key in ("1d", "7d", "30d", "90d")
    }
    assert counts == {"1d": 1, "7d": 2, "30d": 2, "90d": 3}
    hourly = admin_client.get(URL, {"period": "1d"}).context["figures"].series.columns
    assert len(hourly) == 24
    assert admin_client.get(URL, {"period": "nonsense"}).context["period"].key == "7d"


def test_staff_who_are_not_superusers_see_their_own_calls(
    client: Client, viewer: Any, alice: Any
) -> None:
    call("list_tasks", alice)
    call("get_task", viewer)
    client.force_login(viewer)
    figures = client.get(URL).context["figures"]
    assert figures.calls == 1
    assert [bar.label for bar in figures.users] == ["erin"]


def test_an_empty_log_says_so(admin_client: Client) -> None:
    content = admin_client.get(URL).content.decode()
    assert "No tool call in this period." in content


def test_the_change_list_links_to_it(admin_client: Client) -> None:
    content = admin_client.get(CHANGE_LIST).content.decode()
    assert f'href="{URL}"' in content


def test_in_french(admin_client: Client, alice: Any) -> None:
    call("list_tasks", alice)
    with translation.override("fr"):
        content = admin_client.get(URL, HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    assert "Appels par outil" in content
    assert "Erreurs par code" in content


def test_percentiles_from_duration_buckets() -> None:
    durations = [0.0, 0.004, *(float(index) for index in range(1, 199))]
    histogram: dict[int, int] = {}
    for ms in durations:
        bucket = bucket_of(ms)
        histogram[bucket] = histogram.get(bucket, 0) + 1
    # Of 200 sorted durations, the 100th and the 190th: 98 and 188 ms.
    assert overview.percentiles(histogram, (0.5, 0.95)) == [near(98.0), near(188.0)]
    assert overview.percentiles({0: 3}, (0.5,)) == [0.0]
