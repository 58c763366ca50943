"""The answer encoder: pre-encoded tool descriptors spliced in, unusual values encoded."""

from __future__ import annotations

import datetime
import decimal
import json

import pytest
from django.utils.translation import gettext_lazy

from mcp_endpoint.protocol import jsonrpc

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = pytest.mark.once


def test_encoded_items_are_spliced_in_as_they_were_encoded() -> None:
    tools = [jsonrpc.Encoded({"name": "a", "x": [1, 2]}), jsonrpc.Encoded({"name": "b"})]
    message = jsonrpc.result(7, {"tools": tools, "nextCursor": "abc"})
    text = jsonrpc.dumps(message)
    assert json.loads(text) == {
        "jsonrpc": "2.0",
        "id": 7,
        "result": {"tools": [{"name": "a", "x": [1, 2]}, {"name": "b"}], "nextCursor": "abc"},
    }
    assert '[{"name":"a","x":[1,2]},{"name":"b"}]' in text


def test_a_string_that_looks_like_the_marker_is_left_alone() -> None:
    # Only the per-process marker is replaced, and only in the key it stands for.
    tools = [jsonrpc.Encoded({"name": "a"})]
    sneaky = "\x00" + "0" * 16 + ":tools"
    text = jsonrpc.dumps(jsonrpc.result(1, {"tools": tools, "note": sneaky}))
    assert json.loads(text)["result"] == {"tools": [{"name": "a"}], "note": sneaky}


def test_mixed_lists_are_encoded_normally() -> None:
    items = [jsonrpc.Encoded({"name": "a"}), {"name": "b"}]
    assert json.loads(jsonrpc.dumps(jsonrpc.result(1, {"tools": items})))["result"] == {
        "tools": [{"name": "a"}, {"name": "b"}]
    }


def test_dates_decimals_and_lazy_strings() -> None:
    value = {
        "when": datetime.date(2026, 12, 1),
        "at": datetime.datetime(2026, 12, 1, 8, 30, tzinfo=datetime.UTC),
        "price": decimal.Decimal("1.50"),
        "label": gettext_lazy("Open"),
    }
    assert json.loads(jsonrpc.dumps(jsonrpc.result(1, value)))["result"] == {
        "when": "2026-12-01",
        "at": "2026-12-01T08:30:00+00:00",
        # A number, as the REST API writes it (DRF's encoder): a serializer that wants a
        # string (COERCE_DECIMAL_TO_STRING, the default) hands over a string already.
        "price": 1.5,
        "label": "Open",
    }


def test_the_fast_encoder_writes_what_the_standard_library_writes() -> None:
    value = {
        "text": 'naïve \x00 \u2028 \U0001f600 "quoted" back\\slash',
        "numbers": [0, -1, 2**63 - 1, 1.5, 0.1, True, None],
        "nested": {"when": datetime.datetime(2026, 12, 1, 8, 30, 1, 5, tzinfo=datetime.UTC)},
        7: "an integer key",
    }
    expected = json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), default=lambda v: v.isoformat()
    )
    assert jsonrpc.encode(value) == expected


def test_what_the_fast_encoder_refuses_goes_to_the_standard_library() -> None:
    # Integers past 64 bits (a tool may compute one) are still valid JSON numbers.
    assert jsonrpc.encode({"big": 2**70}) == '{"big":1180591620717411303424}'
    assert json.loads(jsonrpc.dumps(jsonrpc.result(1, {"n": -(2**80)})))["result"] == {
        "n": -(2**80)
    }


def test_non_finite_numbers_become_null_so_the_answer_stays_json() -> None:
    text = jsonrpc.encode({"nan": float("nan"), "inf": float("inf")})
    assert json.loads(text) == {"nan": None, "inf": None}
