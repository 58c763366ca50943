"""The call log at a glance: what the admin's overview page charts.

Calls per tool over time, errors by code, duration percentiles per tool, the busiest users,
clients and credentials: read from the call log's counts per closed hour
(:mod:`mcp_endpoint.rollup`) and, for the hours not closed yet, from its rows, so that a
long period of a large log costs its hours, not its rows. Percentiles are nearest-rank
(the smallest duration at or above that share of the calls), to the resolution of the
duration buckets (:mod:`mcp_endpoint.buckets`).

The charts are drawn here as plain geometry for the template to turn into SVG: nothing is
fetched at run time, and no script is needed to read them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from mcp_endpoint import callspool, rollup
from mcp_endpoint.buckets import bucket_duration
from mcp_endpoint.conf import mcp_settings


def own_rows(request: HttpRequest, queryset: QuerySet[Any]) -> QuerySet[Any]:
    """Every row for a superuser; other staff see their own calls or tasks only (the call
    log's and the tasks' change lists, and this overview)."""
    if request.user.is_superuser:
        return queryset
    pk = request.user.pk
    return queryset.filter(user__pk=pk) if pk is not None else queryset.none()


OK = "ok"
TOP = 10
# Tools drawn one by one over time; the others are summed as one series.
SERIES = 6
# Colours of the series, distinguishable by people with the common colour deficiencies
# (Okabe and Ito's palette), on light and dark backgrounds alike.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9", "#d55e00", "#999999")


@dataclass(frozen=True)
class Period:
    """A choice of the page's period: its key in the URL, its label, and its buckets."""

    key: str
    label: Any
    length: timedelta
    step: str  # "hour" or "day": the time chart's buckets


PERIODS = (
    Period("1d", _("Last 24 hours"), timedelta(days=1), "hour"),
    Period("7d", _("Last 7 days"), timedelta(days=7), "day"),
    Period("30d", _("Last 30 days"), timedelta(days=30), "day"),
    Period("90d", _("Last 90 days"), timedelta(days=90), "day"),
)
DEFAULT_PERIOD = "7d"


@dataclass(frozen=True)
class Interval:
    """The period as two instants, ``start`` included and ``end`` not, ends on a bucket."""

    period: Period
    start: datetime
    end: datetime

    @classmethod
    def ending_now(cls, period: Period, now: datetime | None = None) -> Interval:
        now = timezone.localtime(now or timezone.now())
        if period.step == "hour":
            end = now.replace(minute=0, second=0, microsecond=0) + timedelta(hours=1)
        else:
            end = now.replace(hour=0, minute=0, second=0, microsecond=0) + timedelta(days=1)
        return cls(period, end - period.length, end)

    @property
    def step_seconds(self) -> int:
        return 3600 if self.period.step == "hour" else 86400

    def buckets(self) -> list[datetime]:
        step = timedelta(seconds=self.step_seconds)
        count = round((self.end - self.start) / step)
        return [self.start + step * index for index in range(count)]

    def bucket_end(self, start: datetime) -> datetime:
        return start + timedelta(seconds=self.step_seconds)


def choose_period(key: str | None) -> Period:
    return next(
        (p for p in PERIODS if p.key == key), next(p for p in PERIODS if p.key == DEFAULT_PERIOD)
    )


# -- the figures -------------------------------------------------------------------------------


@dataclass
class Bar:
    """One labelled bar of a ranking chart; ``filters`` narrow the call log to its rows."""

    label: str
    value: float
    filters: dict[str, str]
    note: str = ""
    second: float | None = None  # p95 beside p50, for the duration chart


@dataclass
class Overview:
    window: Interval
    calls: int
    errors: int
    api_keys: int
    oauth_apps: int
    series: TimeSeries
    errors_by_code: list[Bar]
    durations: list[Bar]
    users: list[Bar]
    clients: list[Bar]
    credentials: list[Bar]


def overview(window: Interval, owner: Any = None, now: datetime | None = None) -> Overview:
    """The page's figures: of everyone's calls (``owner`` None), or of ``owner``'s own.

    The closed hours of the period are read from their counts (:mod:`mcp_endpoint.rollup`),
    the others from the call log: the counts per bucket of time and tool give the time
    chart, the total and the busiest tools; those per outcome the failures; those per
    credential the top ones and how many keys and apps were used.
    """
    found = rollup.tally(window, owner, now or timezone.now())
    totals: dict[str, int] = {}
    for (_bucket, tool), n in found.per_bucket.items():
        totals[tool] = totals.get(tool, 0) + n
    tools = ranked(totals)
    outcomes = ranked(found.by.get("outcome", {}))
    credentials = ranked(found.by.get("credential", {}))
    busiest = [tool for tool, _n in tools[:TOP]]
    counted = [(bucket, tool, n) for (bucket, tool), n in found.per_bucket.items()]
    return Overview(
        window=window,
        calls=sum(n for _tool, n in tools),
        errors=sum(n for outcome, n in outcomes if outcome != OK),
        api_keys=sum(1 for name, _n in credentials if name.startswith("API key ")),
        oauth_apps=sum(1 for name, _n in credentials if name.startswith("OAuth “")),
        series=time_series(counted, window, busiest[:SERIES]),
        errors_by_code=[
            Bar(code, n, {"outcome__exact": code}) for code, n in outcomes if code != OK
        ][:TOP],
        durations=percentile_bars(found.durations(busiest), busiest),
        users=user_bars(ranked(found.by.get("user", {}))[:TOP]),
        clients=[
            Bar(name or str(_("(no client name)")), n, {"client_name__exact": name})
            for name, n in ranked(found.by.get("client", {}))[:TOP]
        ],
        credentials=[Bar(name, n, {"credential__exact": name}) for name, n in credentials[:TOP]],
    )


def ranked(counted: Mapping[Any, int]) -> list[tuple[Any, int]]:
    """The values and their counts, commonest first; ties by value, an empty one last."""
    return sorted(
        ((value, n) for value, n in counted.items() if n),
        key=lambda item: (-item[1], item[0] is None, "" if item[0] is None else item[0]),
    )


def user_bars(counted: list[tuple[Any, int]]) -> list[Bar]:
    """The busiest users; their names read for those alone."""
    User = get_user_model()
    names = {
        user.pk: str(user)
        for user in User._default_manager.filter(pk__in=[pk for pk, _n in counted if pk])
    }
    bars = []
    for pk, n in counted:
        if pk is None:
            bars.append(Bar(str(_("(no user)")), n, {"user__isnull": "True"}))
        else:
            bars.append(Bar(names.get(pk, str(pk)), n, {"user__id__exact": str(pk)}))
    return bars


def percentile_bars(durations: Mapping[str, Mapping[int, int]], busiest: list[str]) -> list[Bar]:
    bars = []
    for tool in busiest:
        if durations.get(tool):
            p50, p95 = percentiles(durations[tool], (0.5, 0.95))
            bars.append(Bar(tool, p50, {"tool__exact": tool}, second=p95))
    return bars


def percentiles(histogram: Mapping[int, int], fractions: Sequence[float]) -> list[float]:
    """Nearest-rank percentiles (the smallest duration at or above that share of the
    calls) from calls counted per duration bucket: each within the buckets' resolution
    (:data:`mcp_endpoint.buckets.RESOLUTION`) of the exact one."""
    total = sum(histogram.values())
    found = []
    for fraction in fractions:
        rank = max(1, math.ceil(fraction * total - 1e-9))
        seen = 0
        for bucket in sorted(histogram):
            seen += histogram[bucket]
            if seen >= rank:
                found.append(bucket_duration(bucket))
                break
    return found


# -- the time chart ----------------------------------------------------------------------------


@dataclass
class Column:
    """One bucket's stacked column: its segments, bottom up, and where it links."""

    start: datetime
    end: datetime
    total: int
    segments: list[tuple[str, int]] = field(default_factory=list)


@dataclass
class TimeSeries:
    tools: list[str]  # the drawn series, in stacking order; "" is every other tool
    columns: list[Column]
    peak: int


def time_series(
    counted: Iterable[tuple[int, str, int]], window: Interval, drawn: list[str]
) -> TimeSeries:
    """The stacked columns from the calls counted per (bucket, tool)."""
    starts = window.buckets()
    cells: dict[tuple[int, str], int] = {}
    rest = False
    for bucket, tool, n in counted:
        key = tool if tool in drawn else ""
        rest = rest or key == ""
        index = min(max(int(bucket), 0), len(starts) - 1)
        cells[(index, key)] = cells.get((index, key), 0) + n
    tools = [*drawn, ""] if rest else list(drawn)
    columns = []
    for index, start in enumerate(starts):
        segments = [(tool, cells.get((index, tool), 0)) for tool in tools]
        total = sum(n for _tool, n in segments)
        columns.append(Column(start, window.bucket_end(start), total, segments))
    return TimeSeries(tools, columns, max((c.total for c in columns), default=0))


# -- geometry for the template -----------------------------------------------------------------

CHART_WIDTH = 480
CHART_HEIGHT = 200
AXIS_LEFT = 44
AXIS_BOTTOM = 24


def nice_ceiling(value: float) -> float:
    """The axis's top: ``value`` rounded up to 1, 2 or 5 times a power of ten."""
    if value <= 0:
        return 1
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def time_chart(series: TimeSeries, link: Any, within: Mapping[str, str]) -> dict[str, Any]:
    """Rectangles, ticks and labels of the stacked column chart, in SVG user units.

    ``link(filters)`` is the call log's URL for a set of filters.
    """
    top = nice_ceiling(series.peak)
    plot_width = CHART_WIDTH - AXIS_LEFT
    plot_height = CHART_HEIGHT - AXIS_BOTTOM
    count = max(len(series.columns), 1)
    slot = plot_width / count
    width = max(slot * 0.8, 1)
    colours = {tool: PALETTE[i % len(PALETTE)] for i, tool in enumerate(series.tools)}
    colours[""] = PALETTE[-1]
    columns = []
    for index, column in enumerate(series.columns):
        x = AXIS_LEFT + index * slot + (slot - width) / 2
        y = float(plot_height)
        rects = []
        for tool, n in column.segments:
            if not n:
                continue
            height = n / top * plot_height
            y -= height
            rects.append(
                {
                    "x": x,
                    "y": y,
                    "width": width,
                    "height": height,
                    "colour": colours[tool],
                    "tool": tool,
                    "n": n,
                }
            )
        columns.append(
            {
                "rects": rects,
                "total": column.total,
                "start": column.start,
                "end": column.end,
                "url": link(period_filters(column.start, column.end)),
            }
        )
    ticks = [
        {"y": plot_height - fraction * plot_height, "value": round(top * fraction)}
        for fraction in (0, 0.5, 1)
    ]
    every = max(1, math.ceil(count / 6))
    labels = [
        {"x": AXIS_LEFT + index * slot + slot / 2, "start": column.start}
        for index, column in enumerate(series.columns)
        if index % every == 0
    ]
    legend = [
        {
            "tool": tool,
            "colour": colours[tool],
            "url": link({**within, "tool__exact": tool}) if tool else None,
        }
        for tool in series.tools
    ]
    return {
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
        "plot_height": plot_height,
        "axis_left": AXIS_LEFT,
        "columns": columns,
        "ticks": ticks,
        "labels": labels,
        "legend": legend,
    }


def bar_chart(bars: Iterable[Bar], link: Any, base: Mapping[str, str]) -> list[dict[str, Any]]:
    """Each bar's share of the longest (0 to 100), its second mark's, and its link."""
    bars = list(bars)
    longest = max((max(b.value, b.second or 0) for b in bars), default=0) or 1
    return [
        {
            "bar": bar,
            "share": bar.value / longest * 100,
            "second_share": (bar.second / longest * 100) if bar.second is not None else None,
            "url": link({**base, **bar.filters}),
        }
        for bar in bars
    ]


def period_filters(start: datetime, end: datetime) -> dict[str, str]:
    """The change list's date filter for [start, end), as its ``created`` filter spells it."""
    return {"created__gte": start.isoformat(), "created__lt": end.isoformat()}


def change_list_url(base_url: str, filters: Mapping[str, str]) -> str:
    return f"{base_url}?{urlencode(dict(filters))}" if filters else base_url


# -- the page ----------------------------------------------------------------------------------


def page(model_admin: Any, request: HttpRequest) -> TemplateResponse:
    """The admin's overview of the call log: for staff who may view it, their rows only
    unless superusers, as the change list shows them."""

    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    callspool.write_spooled(mcp_settings.LOG_SPOOL_DIR)
    period = choose_period(request.GET.get("period"))
    interval = Interval.ending_now(period)
    owner = None if request.user.is_superuser else request.user.pk
    figures = overview(interval, owner)
    opts = model_admin.opts
    site = model_admin.admin_site
    base = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist", current_app=site.name)
    within = period_filters(interval.start, interval.end)

    def link(filters: Mapping[str, str]) -> str:
        return change_list_url(base, filters)

    context = {
        **site.each_context(request),
        "opts": opts,
        "title": _("Tool calls at a glance"),
        "period": period,
        "periods": [
            {"period": p, "url": f"?{urlencode({'period': p.key})}", "current": p == period}
            for p in PERIODS
        ],
        "figures": figures,
        "all_calls_url": link(within),
        "time_chart": time_chart(figures.series, link, within),
        "rankings": [
            ranking(
                "chart-errors",
                _("Errors by code"),
                _("Code"),
                _("Calls"),
                bar_chart(figures.errors_by_code, link, within),
            ),
            ranking(
                "chart-durations",
                _("Duration per tool (p50 / p95)"),
                _("Tool"),
                _("ms"),
                bar_chart(figures.durations, link, within),
            ),
            ranking(
                "chart-users",
                _("Top users"),
                _("User"),
                _("Calls"),
                bar_chart(figures.users, link, within),
            ),
            ranking(
                "chart-clients",
                _("Top clients"),
                _("Client"),
                _("Calls"),
                bar_chart(figures.clients, link, within),
            ),
            ranking(
                "chart-credentials",
                _("Active keys and OAuth apps"),
                _("Credential"),
                _("Calls"),
                bar_chart(figures.credentials, link, within),
                wide=True,
            ),
        ],
        "change_list_url": base,
    }
    request.current_app = site.name
    return TemplateResponse(request, "admin/mcp_endpoint/toolcall/overview.html", context)


def ranking(
    chart_id: str,
    title: Any,
    heading: Any,
    unit: Any,
    rows: list[dict[str, Any]],
    *,
    wide: bool = False,
) -> dict[str, Any]:
    """One ranking chart of the page: its id, title, column headings and bars."""
    return {
        "id": chart_id,
        "title": title,
        "heading": heading,
        "unit": unit,
        "rows": rows,
        "wide": wide,
    }
