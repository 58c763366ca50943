"""The demo host's settings with the OpenTelemetry SDK set up, for live servers whose spans
a test reads back: each finished span is one JSON line appended to ``$TRACES_FILE``."""

from __future__ import annotations

import os

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor

from project.settings import *  # noqa: F403


def one_line(span: ReadableSpan) -> str:
    return span.to_json(indent=None) + "\n"


_provider = TracerProvider()
_provider.add_span_processor(
    SimpleSpanProcessor(
        ConsoleSpanExporter(
            out=open(os.environ["TRACES_FILE"], "a", buffering=1),  # noqa: SIM115
            formatter=one_line,
        )
    )
)
trace.set_tracer_provider(_provider)
