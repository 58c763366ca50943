"""``search_tools``' scores: a tool's words are split and sorted once per served list, and
a query's stem is looked up by bisection; the score must be what comparing the stem with
every word of every field gives (the rule the docstring of ``toolsets.score`` states)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mcp_endpoint.toolsets import Fields, fields_of, score, stems, words

WORD = st.text(alphabet="abcdefgst_ 0123", min_size=0, max_size=12)


def matches(query: str, tool: Any, fields: Fields | None = None) -> int:
    """What search_tools scores ``tool`` for ``query``."""
    return score(stems(query), fields if fields is not None else fields_of(tool))


def naive(query: str, tool: Any) -> int:
    fields = (
        (words(tool.name), 4),
        (words(tool.toolset), 3),
        (words(tool.title or ""), 2),
        (words(tool.description), 1),
    )
    total = 0
    for stem in stems(query):
        for found, weight in fields:
            if any(w.startswith(stem) for w in found):
                total += weight
                break
    return total


@given(
    name=WORD,
    toolset=WORD,
    title=st.none() | WORD,
    description=st.lists(WORD, max_size=6).map(" ".join),
    query=st.lists(WORD, max_size=4).map(" ".join),
)
def test_a_score_is_every_word_compared(
    name: str, toolset: str, title: str | None, description: str, query: str
) -> None:
    tool: Any = SimpleNamespace(name=name, toolset=toolset, title=title, description=description)
    expected = naive(query, tool)
    assert matches(query, tool) == expected
    assert matches(query, tool, fields_of(tool)) == expected


def test_a_plural_finds_its_singular_and_a_word_its_longer_forms() -> None:
    tool: Any = SimpleNamespace(
        name="list_tasks", toolset="tasks", title=None, description="Lists the open tasks."
    )
    assert matches("task", tool) == 4  # "task" starts "tasks", in the name
    assert matches("open", tool) == 1  # only in the description
    assert matches("lists tasks", tool) == 8
    assert matches("invoice", tool) == 0
