"""One default gate per suite format, the same in process, over gRPC and in the CLI;
skipped checks counted apart (issue 14, section 4).

The rule: an evalstone suite (or a RunSuite given checks) with no gate passes unless a
score errored (`max_error_rate` 0, seed 000), whatever its pass rate; a checkllm file
passes only when every test passed (`min_pass_rate` 1). A check whose `when:` condition
was not met passes (seed 003) but is counted as skipped, not passed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from scorewire.api import run_suite_file, score
from scorewire.suites.checkllm_suite import DEFAULT_GATE
from scorewire.v1 import scoring_pb2 as pb

from tests.cli.conftest import run_cli
from tests.server.conftest import Server

# Half the cases fail `exact`, none errors: the evalstone default gate passes.
HALF = [
    {"id": "a", "expected": "Paris", "output": "Paris"},
    {"id": "b", "expected": "Rome", "output": "Milan"},
]
SUITE = {
    "checks": {
        "same": {"type": "exact"},
        # applies only to outputs that mention Rome: skipped on both cases here
        "roman": {
            "type": "contains",
            "needles": ["Rome"],
            "when": {"type": "contains", "needles": ["Rom"]},
        },
    },
    "datasets": {"qa": {"path": "qa.jsonl"}},
    "suites": {"s": {"dataset": "qa", "checks": ["same", "roman"]}},
}  # fmt: skip


def _evalstone(tmp: Path, rows: list[dict[str, str]] = HALF) -> Path:
    (tmp / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    path = tmp / "suite.yaml"
    path.write_text(yaml.safe_dump(SUITE, sort_keys=False))
    return path


def test_in_process_the_default_gate_passes_a_half_passing_run(tmp_path: Path) -> None:
    # in process: 50% of cases pass, nothing errored -> the gate passes
    _, summary = run_suite_file(str(_evalstone(tmp_path)), suite="s")
    assert (summary.cases, summary.cases_passed) == (2, 1)
    assert summary.gate_passed, summary.gate_reasons


def test_in_process_an_error_fails_the_default_gate(tmp_path: Path) -> None:
    # a sample with no expected value makes `exact` an error score: max_error_rate 0
    rows = [{"id": "a", "output": "Paris"}, {"id": "b", "expected": "Rome", "output": "Rome"}]
    _, summary = run_suite_file(str(_evalstone(tmp_path, rows)), suite="s")
    assert summary.errored == 1 and not summary.gate_passed
    assert "max_error_rate" in summary.gate_reasons[0]


def test_skipped_checks_are_counted_apart_in_process(tmp_path: Path) -> None:
    # `roman` never applies: both its scores pass but count as skipped, not passed
    results, summary = run_suite_file(str(_evalstone(tmp_path)), suite="s")
    roman = next(t for t in summary.checks if t.name == "roman")
    assert (roman.skipped, roman.passed, roman.failed, roman.total) == (2, 0, 0, 0)
    assert summary.skipped == 2 and summary.passed == 1  # only `same` on case a
    assert all(r.scores[1].skipped and r.scores[1].passed for r in results)
    assert summary.mean_score == 0.5  # over the two applied scores, not four


def test_a_skipped_score_is_marked() -> None:
    # the condition fails: the score passes, with the skipped flag; a met one is not
    check = {"type": "contains", "needles": ["x"], "when": {"type": "contains", "needles": ["y"]}}
    (skipped,) = score("no", [check])
    (applied,) = score("y x", [check])
    assert skipped.passed and skipped.skipped and skipped.error is None
    assert applied.passed and not applied.skipped


async def test_over_grpc_the_same_default_and_skipped_counts(server: Server) -> None:
    # RunSuite with checks and no gate: the evalstone rule; skipped in the summary
    cases = [
        pb.Case(sample=pb.Sample(id=r["id"], expected=_value(r["expected"])),
                output=pb.Output(text=r["output"]))
        for r in HALF
    ]  # fmt: skip
    checks = [
        pb.CheckSpec(type="exact", name="same"),
        pb.CheckSpec(
            type="contains",
            name="roman",
            params=_struct({"needles": ["Rome"]}),
            when=pb.CheckSpec(type="contains", params=_struct({"needles": ["Rom"]})),
        ),
    ]
    summary = None
    scores = []
    async for ev in server.stub.RunSuite(pb.RunSuiteRequest(cases=cases, checks=checks)):
        if ev.WhichOneof("event") == "summary":
            summary = ev.summary
        else:
            scores.extend(s for r in ev.results.results for s in r.scores)
    assert summary is not None
    assert (summary.cases, summary.cases_passed, summary.gate_passed) == (2, 1, True)
    assert summary.skipped == 2 and summary.passed == 1
    assert [(c.name, c.skipped) for c in summary.checks] == [("same", 0), ("roman", 2)]
    assert [s.skipped for s in scores if s.name == "roman"] == [True, True]


@pytest.mark.slow
def test_in_the_cli_the_same_rules_and_skipped_counts(tmp_path: Path) -> None:
    # the CLI: evalstone passes at 50% (exit 0) and shows skipped; checkllm needs every test
    path = _evalstone(tmp_path)
    out = tmp_path / "results.json"
    done = run_cli("run", str(path), "--suite", "s", "--output", str(out))
    assert done.code == 0, done.stdout + done.stderr
    assert "2 skipped" in done.stdout
    doc = json.loads(out.read_text())
    assert doc["summary"]["skipped"] == 2
    assert [c["skipped"] for c in doc["summary"]["checks"]] == [0, 2]
    checkllm = tmp_path / "c.yaml"
    checkllm.write_text(
        yaml.safe_dump(
            {
                "prompts": ["{{q}}"],
                "providers": ["echo"],
                "tests": [
                    {"vars": {"q": "Paris"}, "assert": [{"type": "contains", "value": "Paris"}]},
                    {"vars": {"q": "Milan"}, "assert": [{"type": "contains", "value": "Rome"}]},
                ],
            }
        )
    )
    assert DEFAULT_GATE.min_pass_rate == 1.0
    done = run_cli("run", str(checkllm))
    assert done.code == 1 and "min_pass_rate 1" in done.stdout


def _struct(obj: dict[str, object]) -> object:
    from google.protobuf import struct_pb2

    s = struct_pb2.Struct()
    s.update(obj)
    return s


def _value(text: str) -> object:
    from google.protobuf import struct_pb2

    return struct_pb2.Value(string_value=text)


def test_in_process_a_baseline_gate_is_never_a_silent_pass(tmp_path: Path) -> None:
    # No run store in process: a gate naming a baseline fails and says it was not compared.
    path = _evalstone(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["suites"]["s"]["gate"] = {"baseline": "nightly"}
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    _, summary = run_suite_file(str(path), suite="s")
    assert not summary.gate_passed
    assert "was not compared" in summary.gate_reasons[-1]
