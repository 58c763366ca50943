"""``benchmarks/suite_cpu.py``: the census of where the suite's CPU goes."""

from __future__ import annotations

from benchmarks.suite_cpu import busy_seconds, report


def test_the_census_adds_up_by_module_and_ranks_by_cpu() -> None:
    rows = [
        ["tests/test_a.py::test_one", 1.0, 0.5],
        ["tests/test_a.py::test_two[x]", 2.0, 1.5],
        ["tests/test_b.py::test_three", 9.0, 2.0],
    ]
    text = report(rows, top=2)
    assert text.splitlines()[0] == "3 tests: 12 s of wall time, 4 s of busy CPU"
    modules = [
        line for line in text.splitlines() if line.startswith("| tests/test_") and ".py |" in line
    ]
    assert modules == [
        "| tests/test_a.py | 2 | 3.0 | 2.0 | 50.0% |",
        "| tests/test_b.py | 1 | 9.0 | 2.0 | 50.0% |",
    ]
    tests = [line for line in text.splitlines() if "::" in line]
    assert tests == [
        "| tests/test_b.py::test_three | 9.0 | 2.0 |",
        "| tests/test_a.py::test_two[x] | 2.0 | 1.5 |",
    ]


def test_the_machines_busy_time_only_grows() -> None:
    before = busy_seconds()
    sum(i * i for i in range(200_000))
    assert busy_seconds() >= before > 0
