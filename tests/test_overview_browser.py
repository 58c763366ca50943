"""The call log's overview and change list in Chromium: readable in the admin's light and
dark themes, no sideways scrolling at phone width, the change list's columns at 1,400 px;
and the admin's new-key page in its dark theme.

The demo host runs under gunicorn (the server of tests/test_browser.py); the rows are made
in its database with its own shell.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser import ADMIN_HEADER, CONTRAST_SCRIPT, DESKTOP, PHONE, assert_readable
from tests.live_server import LiveServer, run_script
from tests.test_browser import admin_sign_in, browser, page, server

__all__ = ["browser", "page", "server"]  # the module-scoped fixtures, this module's own

pytestmark = [pytest.mark.e2e, pytest.mark.once]

OVERVIEW = "/admin/mcp_endpoint/toolcall/overview/"
CHANGE_LIST = "/admin/mcp_endpoint/toolcall/"
WIDE = {"width": 1400, "height": 900}

ROWS = """
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from mcp_endpoint.models import ToolCall
users = list(get_user_model().objects.filter(username__in=["alice", "bob"]))
credentials = [
    "API key “Cursor on the work laptop” (mcp_1a2b3c4d)",
    "OAuth “Claude” (client 9f8e7d6c-5b4a-3210-fedc-ba9876543210)",
]
tools = ["list_tasks", "get_task", "create_task", "summarize_project", "update_task",
         "list_projects", "export_project_tasks"]
rows = []
for n in range(140):
    rows.append(ToolCall(
        endpoint="mcp", tool=tools[n % len(tools)], user=users[n % 2],
        credential=credentials[n % 2], client_name=["Claude Code", "Cursor", ""][n % 3],
        client_version="2.1.0", user_agent="claude-code/2.1.0 (cli)", ip="127.0.0.1",
        outcome="ok" if n % 9 else ["not_found", "invalid_arguments"][n % 2],
        duration_ms=float(5 + (n * 37) % 400), arguments={"project_id": 1},
    ))
made = ToolCall.objects.bulk_create(rows)
now = timezone.now()
for n, row in enumerate(made):
    ToolCall.objects.filter(pk=row.pk).update(created=now - timedelta(hours=n % 150))
"""

# The chart's text, numbers and headings (not only links and buttons) at 4.5:1 or more.
TEXT_CONTRAST_SCRIPT = CONTRAST_SCRIPT.replace(
    "'a[href], button, input[type=submit], input[type=button], summary, [role=button]'",
    "'.mcp-overview text, .mcp-overview td, .mcp-overview th, .mcp-overview dt, "
    ".mcp-overview dd, .mcp-overview h2, .mcp-overview li, .mcp-overview p'",
).replace('(element.innerText || element.value || "")', '(element.textContent || "")')


@pytest.fixture(scope="module")
def rows(server: LiveServer) -> None:
    run_script(server.env, ROWS)


def text_contrast_problems(page: Any) -> list[dict[str, Any]]:
    assert TEXT_CONTRAST_SCRIPT != CONTRAST_SCRIPT
    result = page.evaluate(TEXT_CONTRAST_SCRIPT, [4.5, None])
    assert result["checked"] > 20, result
    problems: list[dict[str, Any]] = result["problems"]
    return problems


def use_theme(page: Any, theme: str) -> None:
    """The admin's theme toggle's choice ("light", "dark" or "auto"), as it stores it."""
    page.evaluate(f"localStorage.setItem('theme', '{theme}')")
    page.reload()
    assert page.evaluate("document.documentElement.dataset.theme") == theme


def test_the_overview_reads_in_both_themes_and_at_phone_width(
    rows: None, page: Any, server: LiveServer
) -> None:
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, OVERVIEW)
    assert page.locator("#chart-calls svg rect").count() > 10
    for theme in ("light", "dark"):
        use_theme(page, theme)
        assert_readable(page, sizes=(PHONE, DESKTOP), skip=ADMIN_HEADER)
        assert text_contrast_problems(page) == [], theme
    # The browser's preference, with the toggle on "auto".
    page.emulate_media(color_scheme="dark")
    use_theme(page, "auto")
    background = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background != "rgb(255, 255, 255)"
    assert text_contrast_problems(page) == []
    use_theme(page, "light")


def test_each_chart_links_to_its_rows_in_the_call_log(
    rows: None, page: Any, server: LiveServer
) -> None:
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, OVERVIEW + "?period=30d")
    page.locator("#chart-errors").get_by_role("link", name="not_found").click()
    page.wait_for_url(f"**{CHANGE_LIST}?*")
    outcomes = page.locator("#result_list td.field-outcome_code").all_inner_texts()
    assert outcomes and set(outcomes) == {"not_found"}

    page.go_back()
    page.locator(".mcp-legend").get_by_role("link", name="get_task").click()
    page.wait_for_url(f"**{CHANGE_LIST}?*")
    tools = page.locator("#result_list td.field-tool_name").all_inner_texts()
    assert tools and set(tools) == {"get_task"}

    page.go_back()
    page.locator("#chart-calls svg a").first.click()  # one day's column
    page.wait_for_url(f"**{CHANGE_LIST}?*created__gte*")
    assert page.locator("#result_list tbody tr").count() > 0


def test_the_change_list_keeps_its_columns_at_1400_px(
    rows: None, page: Any, server: LiveServer
) -> None:
    page.set_viewport_size(WIDE)
    admin_sign_in(page, server, CHANGE_LIST)
    assert page.get_by_role("link", name="Overview").is_visible()
    visible = page.evaluate(
        """() => {
          const box = document.querySelector('#changelist .results') ||
            document.querySelector('#changelist');
          const right = Math.min(box.getBoundingClientRect().right, window.innerWidth);
          return [...document.querySelectorAll('#result_list thead th')].map((th) => {
            const box = th.getBoundingClientRect();
            return {column: th.className.replace('sortable ', '').split(' ')[0],
              width: Math.round(box.width), right: box.right, limit: right};
          });
        }"""
    )
    cut = [c for c in visible if c["right"] > c["limit"] + 1]
    assert cut == [], [(c["column"], c["width"], round(c["right"])) for c in visible]
    assert any("outcome" in c["column"] for c in visible)
    # One line each, however tall the row: the text is about one em and a bit high.
    lines = page.evaluate(
        """() => [...document.querySelectorAll('#result_list td.field-credential_name span')]
          .map((span) => span.getBoundingClientRect().height /
            parseFloat(getComputedStyle(span).fontSize))"""
    )
    assert lines and max(lines) < 2, lines  # a line is about 1.2 to 1.5 em high


SNIPPET_CONTRAST_SCRIPT = CONTRAST_SCRIPT.replace(
    "'a[href], button, input[type=submit], input[type=button], summary, [role=button]'",
    "'.mcp-snippet, .mcp-copy, .mcp-badge'",
)


def test_the_new_key_page_in_the_admins_dark_theme(page: Any, server: LiveServer) -> None:
    page.set_viewport_size(DESKTOP)
    admin_sign_in(page, server, "/admin/mcp_endpoint/apikey/add/")
    use_theme(page, "dark")
    page.locator(".field-user .select2-selection").click()
    page.keyboard.type("alic")
    page.get_by_role("option", name="alice", exact=True).click()
    page.get_by_label("Name:", exact=True).fill("dark theme laptop")
    page.get_by_label("read: See your projects, tasks and comments").check()
    page.get_by_role("button", name="Save", exact=True).click()
    page.wait_for_url(re.compile(r".*/created/\?next=list$"))
    for size in (PHONE, DESKTOP):
        page.set_viewport_size(size)
        boxes = page.evaluate(SNIPPET_CONTRAST_SCRIPT, [4.5, None])
        assert boxes["checked"] >= 4 and boxes["problems"] == [], (size, boxes)
        # Dark boxes on the dark page, not light ones.
        background = page.evaluate(
            "getComputedStyle(document.querySelector('pre.mcp-snippet')).backgroundColor"
        )
        assert background != "rgb(243, 244, 246)", background
        assert_readable(page, sizes=(size,), skip=ADMIN_HEADER)
    # The key stays whole on its line of the JSON: the box scrolls, it does not wrap.
    key = page.locator("#raw-key").input_value()
    cursor = page.locator("pre.mcp-snippet", has_text='"Authorization"').first
    assert page.evaluate("(e) => getComputedStyle(e).whiteSpace", cursor.element_handle()) == "pre"
    lines = cursor.inner_text().splitlines()
    assert any(key in line for line in lines), lines
    page.set_viewport_size(PHONE)
    shown = page.evaluate(
        """(e) => { const s = getComputedStyle(e);
          return (e.clientHeight - parseFloat(s.paddingTop) - parseFloat(s.paddingBottom)) /
            parseFloat(s.lineHeight); }""",
        cursor.element_handle(),
    )
    assert round(shown) == len(lines), (shown, len(lines))  # no line drawn on two
    use_theme(page, "light")
