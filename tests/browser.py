"""Debian's Chromium through Playwright, and what every page the app ships must pass in it:
every link and button readable (text contrast of at least 4.5:1, WCAG AA), and no
horizontal scrolling at phone width.

Contrast is computed from the computed styles: the text colour against the background
found by walking up from the element to the first opaque one, blending the translucent
ones met on the way. Playwright never downloads a browser here; the tests drive
``/usr/bin/chromium``.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import django

from tests.live_server import missing

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
MINIMUM_CONTRAST = 4.5

# Returns the links and buttons whose text is below the minimum, with what was measured.
CONTRAST_SCRIPT = """
([minimum, skip]) => {
  const parse = (value) => {
    const m = value.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const parts = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [parts[0], parts[1], parts[2], parts.length > 3 ? parts[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const luminance = (c) => {
    const channel = (v) => {
      v = v / 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4);
    };
    return 0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  };
  const background = (element) => {
    const layers = [];
    for (let node = element; node; node = node.parentElement) {
      const colour = parse(getComputedStyle(node).backgroundColor);
      if (colour[3] > 0) layers.push(colour);
      if (colour[3] >= 1) break;
    }
    let result = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) result = over(layers[i], result);
    return result;
  };
  const visible = (element) => {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return style.visibility !== "hidden" && style.display !== "none" && box.width > 1 &&
      box.height > 1 && !element.closest("[hidden]") && element.getClientRects().length > 0;
  };
  const selector =
    'a[href], button, input[type=submit], input[type=button], summary, [role=button]';
  const problems = [];
  let checked = 0;
  for (const element of document.querySelectorAll(selector)) {
    if (!visible(element) || element.disabled || (skip && element.closest(skip))) continue;
    const text = (element.innerText || element.value || "").trim();
    if (!text) continue;
    checked += 1;
    const bg = background(element);
    const fg = over(parse(getComputedStyle(element).color), bg);
    const [l1, l2] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const ratio = (l1 + 0.05) / (l2 + 0.05);
    if (ratio < minimum) {
      problems.push({text: text.slice(0, 60), ratio: Math.round(ratio * 100) / 100,
        color: fg.slice(0, 3).map(Math.round).join(","),
        background: bg.slice(0, 3).map(Math.round).join(",")});
    }
  }
  return {checked, problems};
}
"""

OVERFLOW_SCRIPT = """
() => {
  const root = document.scrollingElement || document.documentElement;
  const width = root.clientWidth;
  // The innermost elements that stick out, to say which one is at fault.
  const out = [...document.body.querySelectorAll("*")].filter((e) => {
    const box = e.getBoundingClientRect();
    const spills = e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 &&
      getComputedStyle(e).overflowX === "visible";
    return (box.right > width + 1 || spills) && ![...e.children].some(
      (c) => c.getBoundingClientRect().right > width + 1);
  });
  return {scrollWidth: root.scrollWidth, clientWidth: width,
    culprits: out.slice(-6).map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className}`)};
}
"""


def require_browser() -> None:
    """Skip without Playwright or Chromium, except under CI, where that is a failure."""
    reason = None
    if importlib.util.find_spec("playwright") is None:
        reason = "Playwright is not installed (pip install the dev extras)"
    elif not CHROMIUM.exists():
        reason = "Chromium is missing: apt-get install chromium"
    if reason is not None:
        missing(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium browser, closed on exit."""
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield browser
        finally:
            browser.close()


def contrast_problems(page: Any, skip: str | None = None) -> list[dict[str, Any]]:
    """The links and buttons of ``page`` whose text contrast is below 4.5:1, leaving out
    those inside ``skip`` (a CSS selector)."""
    result = page.evaluate(CONTRAST_SCRIPT, [MINIMUM_CONTRAST, skip])
    assert result["checked"] > 0, "no link or button was found to measure"
    problems: list[dict[str, Any]] = result["problems"]
    return problems


def scrolls_sideways(page: Any) -> bool:
    widths = page.evaluate(OVERFLOW_SCRIPT)
    return bool(widths["scrollWidth"] > widths["clientWidth"])


# The admin's header (site name, user links, theme toggle) is the host's, from its
# admin/base_site.html; everything below it on an admin page is the app's. Django 4.2's
# own stylesheet draws the breadcrumbs, the app list's captions and the filter links
# below 4.5:1 (Django 5.0 darkened them): those are Django's, not the app's, there.
ADMIN_HEADER = (
    "#header"
    if django.VERSION >= (5, 0)
    else "#header, .breadcrumbs, #nav-sidebar, #changelist-filter"
)


def assert_readable(
    page: Any, sizes: tuple[dict[str, int], ...] = (PHONE, DESKTOP), skip: str | None = None
) -> None:
    """At each size: every link and button readable, and no horizontal scrolling."""
    for size in sizes:
        page.set_viewport_size(size)
        page.wait_for_load_state()
        problems = contrast_problems(page, skip)
        assert problems == [], f"{page.url} at {size['width']} px: {problems}"
        assert not scrolls_sideways(page), (
            f"{page.url} scrolls sideways at {size['width']} px: {page.evaluate(OVERFLOW_SCRIPT)}"
        )
