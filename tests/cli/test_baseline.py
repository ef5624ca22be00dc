"""`scorewire run --baseline` and `--record`, as a user runs them: a subprocess, exit codes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import grpc
from scorewire.runs import RunQuery, RunStatus
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

from tests.cli.conftest import run_cli

SUITE = """
checks:
  same: {type: exact}
  short: {type: length, max_chars: 100}
datasets:
  qa: {path: qa.jsonl}
suites:
  smoke:
    dataset: qa
    checks: [same, short]
    gate: {min_pass_rate: 0.5%s}
"""


def write_suite(tmp: Path, outputs: dict[str, str], gate_extra: str = "") -> Path:
    rows = [
        {"id": "a", "input": "France", "expected": "Paris", "output": outputs["a"]},
        {"id": "b", "input": "Italy", "expected": "Rome", "output": outputs["b"]},
    ]
    (tmp / "qa.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    path = tmp / "s.yaml"
    path.write_text(SUITE % gate_extra)
    return path


def flat(text: str) -> str:
    """Output with its line wrapping undone (rich wraps non-terminal output at 80 columns)."""
    return " ".join(text.split())


BASE = {"a": "Paris", "b": "Milan"}  # a passes, b fails `same`
WORSE = {"a": "Lyon", "b": "Rome"}  # a regressed, b improved
SAME = {"a": "Paris", "b": "Milan"}


def test_a_regression_against_a_results_file_exits_1_naming_the_case(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, BASE)
    assert run_cli("run", str(suite), "--output", str(tmp_path / "base.json")).code == 0
    write_suite(tmp_path, WORSE)
    done = run_cli("run", str(suite), "--baseline", str(tmp_path / "base.json"))
    assert done.code == 1, done.stderr
    assert "a (same)" in flat(done.stdout) and "gate: FAILED" in flat(done.stdout)
    write_suite(tmp_path, SAME)
    done = run_cli("run", str(suite), "--baseline", str(tmp_path / "base.json"))
    assert done.code == 0, done.stdout


async def test_a_recorded_run_is_a_baseline_by_name(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, BASE)
    done = run_cli("run", str(suite), "--record", "--run-name", "nightly", "--label", "git_sha=1")
    assert done.code == 0 and "recorded as run run_" in flat(done.stderr)
    store = await SqliteRunStore.open(os.path.join(os.environ["SCOREWIRE_STATE_DIR"], "runs.db"))
    try:
        (run,) = await store.list_runs(RunQuery(name="nightly"), after=None, limit=5)
        assert (run.source, run.status, run.results, run.labels) == (
            "cli",
            RunStatus.COMPLETE,
            2,
            {"git_sha": "1"},
        )
        assert run.summary is not None and run.summary["cases_passed"] == 1
    finally:
        await store.close()
    write_suite(tmp_path, WORSE)
    done = run_cli("run", str(suite), "--baseline", "nightly")
    assert done.code == 1 and "a (same)" in flat(done.stdout)


def test_the_suites_gate_names_a_results_file_beside_it(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, BASE)
    assert run_cli("run", str(suite), "--output", str(tmp_path / "base.json")).code == 0
    write_suite(tmp_path, WORSE, ", baseline: base.json")
    done = run_cli("run", str(suite), cwd=Path("/"))
    assert done.code == 1 and "a (same)" in flat(done.stdout)


def test_an_unknown_baseline_is_a_usage_error_before_anything_runs(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, BASE)
    done = run_cli("run", str(suite), "--baseline", "no-such-run")
    assert done.code == 2
    assert "no-such-run" in flat(done.stderr) and "scoring" not in flat(done.stderr)
    (tmp_path / "bad.json").write_text("{}")
    done = run_cli("run", str(suite), "--baseline", str(tmp_path / "bad.json"))
    assert done.code == 2 and "not a results file" in flat(done.stderr)


def test_a_baseline_recorded_on_the_server(tmp_path: Path, server_addr: str) -> None:
    # Record the baseline on the server through RunSuite, with the suite's sample ids.
    req = pb.RunSuiteRequest(record=True, run_name="server-nightly")
    req.checks.add(name="same", type="exact")
    req.checks.add(name="short", type="length").params.update({"max_chars": 100})
    for sid, text, expected in (("a", "Paris", "Paris"), ("b", "Milan", "Rome")):
        c = req.cases.add()
        c.sample.id = sid
        c.sample.expected.string_value = expected
        c.output.text = text
    with grpc.insecure_channel(server_addr) as channel:
        events = list(pb_grpc.ScoringServiceStub(channel).RunSuite(req))
    assert events[-1].summary.run_id
    suite = write_suite(tmp_path, WORSE)
    done = run_cli("run", str(suite), "--server", server_addr, "--baseline", "server-nightly")
    assert done.code == 1, done.stderr
    assert "a (same)" in flat(done.stdout) and events[-1].summary.run_id in flat(done.stdout)


JUDGED = """
checks:
  polite: {type: judge, rubric: "Is it polite?", model: "openai:gpt-4o-mini"}
datasets:
  qa: {path: qa.jsonl}
suites:
  smoke:
    dataset: qa
    checks: [polite]
"""


def test_a_judge_that_moved_on_the_same_outputs_is_noted_against_the_baseline(
    tmp_path: Path,
) -> None:
    # The stand-in judge answers level 5 as one model version, then level 2 as another:
    # the outputs are the same, so what moved is the judge (noted, not a gate failure).
    from tests.fakes.base import Reply
    from tests.fakes.openai_server import FakeOpenAI

    write_suite(tmp_path, SAME)
    suite = tmp_path / "s.yaml"
    suite.write_text(JUDGED)
    fake = FakeOpenAI(api_key="sk-fake-drift-0123456789")
    env = {"SCOREWIRE_OPENAI_API_KEY": fake.api_key, "SCOREWIRE_OPENAI_BASE_URL": ""}
    with fake.running():
        env["SCOREWIRE_OPENAI_BASE_URL"] = fake.url
        fake.default = Reply(content='{"reasoning": "r", "score": 5}', model="mini-2024")
        base = tmp_path / "base.json"
        assert run_cli("run", str(suite), "--output", str(base), **env).code == 0
        doc = json.loads(base.read_text())
        judge = doc["results"][0]["scores"][0]["judge"]
        assert judge["models"] == ["openai:gpt-4o-mini"]
        assert judge["reported_models"] == ["mini-2024"]
        fake.default = Reply(content='{"reasoning": "r", "score": 2}', model="mini-2025")
        done = run_cli("run", str(suite), "--baseline", str(base), **env)
    text = flat(done.stdout)
    assert "judge drift: polite's judge reported mini-2025 (was mini-2024" in text, text
    assert "mean moved -0.75 over 2 shared outputs" in text
