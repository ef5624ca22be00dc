"""`scorewire agreement` and `scorewire calibrate` as a user runs them: a real `scorewire run`
against the stand-in judge, labels of the exact outputs, exit codes and the JSON written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import jsonschema
import pytest
from scorewire.labels.label_model import output_hash
from scorewire.v1 import labels_pb2, labels_pb2_grpc

from tests.cli.conftest import ROOT, Done, cli_env, run_cli
from tests.cli.test_run import write
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

OUTPUTS = ["great answer", "great but wrong", "poor answer", "poor yet right", "great again"]
# people pass the first, fourth and fifth
HUMAN = {0: True, 1: False, 2: False, 3: True, 4: True}


def scorewire(*args: str, **env: str) -> Done:
    """`scorewire <args>` through the full command (agreement lives beside serve/label)."""
    proc = subprocess.run(
        [sys.executable, "-m", "scorewire.cli.main", *args],
        cwd=ROOT,
        env=cli_env(**env),
        capture_output=True,
        text=True,
        timeout=120,
    )
    return Done(proc.returncode, proc.stdout, proc.stderr)


def _judge(body: Any) -> Reply:
    # level 5 for outputs saying "great", 1 otherwise
    user = body["messages"][-1]["content"]
    return Reply(content=json.dumps({"reasoning": "judged", "score": 5 if "great" in user else 1}))


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A results JSON of `scorewire run`: one judge check (sentiment) and one deterministic."""
    tmp = tmp_path_factory.mktemp("agreement")
    doc = {
        "judge": {"backend": "openai", "model": "gpt-4o-mini"},
        "tests": [
            {
                "output": text,
                "assert": [{"type": "sentiment", "samples": 2}, {"type": "contains", "value": "a"}],
            }
            for text in OUTPUTS
        ],
    }
    fake = FakeOpenAI(api_key="sk-fake")
    fake.responder = _judge
    out = tmp / "results.json"
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp, "s.yaml", doc)),
            "--output",
            str(out),
            SCOREWIRE_OPENAI_API_KEY="sk-fake",
            SCOREWIRE_OPENAI_BASE_URL=fake.url,
        )
    assert done.code in (0, 1), done.stderr
    return out


def _labels(results: Path, verdicts: dict[int, bool]) -> list[dict[str, Any]]:
    rows = json.loads(results.read_text())["results"]
    by_output = {r["output"]: r for r in rows}
    return [
        {
            "sample_id": by_output[OUTPUTS[i]]["sample_id"],
            "output_hash": output_hash(OUTPUTS[i]),
            "passed": passed,
            "labeller": "ana",
            "note": "" if passed else f"ana says no to {i}",
        }
        for i, passed in verdicts.items()
    ]


def _write_labels(path: Path, labels: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(lb) + "\n" for lb in labels))
    return path


def test_sampled_scores_carry_their_spread_in_the_results_file(results: Path) -> None:
    doc = json.loads(results.read_text())
    schema = json.loads((ROOT / "schemas/results.schema.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    spreads = [s["spread"] for r in doc["results"] for s in r["scores"] if s["type"] == "sentiment"]
    assert len(spreads) == 5
    assert all(sp["samples"] == 2 and sp["agreement"] == 1.0 for sp in spreads)
    assert {
        s["spread"] is None for r in doc["results"] for s in r["scores"] if s["type"] == "contains"
    } == {True}


def test_agreement_prints_and_writes_the_figures(results: Path, tmp_path: Path) -> None:
    labels = _write_labels(tmp_path / "labels.jsonl", _labels(results, HUMAN))
    out = tmp_path / "agreement.json"
    done = scorewire("agreement", str(results), "--labels", str(labels), "--json", str(out))
    assert done.code == 0, done.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == "scorewire.agreement/1"
    [check] = doc["checks"]  # the deterministic `contains` is not judge-backed
    # judge passes 0, 1, 4 (great); people pass 0, 3, 4
    assert check["name"] == "sentiment" and check["pairs"] == 5
    assert check["confusion"] == {
        "judge_pass_human_pass": 2,
        "judge_pass_human_fail": 1,
        "judge_fail_human_pass": 1,
        "judge_fail_human_fail": 1,
    }
    assert check["accuracy"] == pytest.approx(0.6)
    # p_o 0.6, p_e 0.6·0.6 + 0.4·0.4 = 0.52 → kappa 1/6
    assert check["kappa"] == pytest.approx(1 / 6)
    low, high = check["kappa_interval"]
    assert low <= check["kappa"] <= high
    assert {d["sample_id"] for d in check["disagreements"]} == {
        _labels(results, HUMAN)[1]["sample_id"],
        _labels(results, HUMAN)[3]["sample_id"],
    }
    assert any(d["human_note"] == "ana: ana says no to 1" for d in check["disagreements"])
    assert "kappa 0.167" in done.stdout and "5 pairs" in done.stdout
    # TP 2, FP 1, FN 1: F1 4/6; people passed 3 of 5 (the base rate beside accuracy)
    assert check["f1"] == pytest.approx(4 / 6) and check["base_rate"] == pytest.approx(0.6)
    assert "F1 0.667" in done.stdout and "people passed 60.0% (base rate)" in done.stdout
    # values 1, 1, 0, 0, 1 against verdicts 1, 0, 0, 1, 1: both binary, so Pearson and
    # Spearman are the phi coefficient (2·1 − 1·1) / √(3·2·3·2) = 1/6; MAE 2 misses of 5
    assert check["pearson"] == pytest.approx(1 / 6) == check["spearman"]
    assert check["mae"] == pytest.approx(0.4) and check["kappa_band"] == "slight"
    assert "kappa band slight (Landis–Koch)" in done.stdout
    assert "Pearson r 0.167, Spearman rho 0.167, MAE 0.400" in done.stdout
    # a results file names no judge configuration: none is guessed
    assert check["judge"] is None


def test_the_same_seed_gives_the_same_interval(results: Path, tmp_path: Path) -> None:
    labels = _write_labels(tmp_path / "labels.jsonl", _labels(results, HUMAN))
    docs = []
    for _ in range(2):
        done = scorewire(
            "agreement", str(results), "--labels", str(labels), "--seed", "5", "--json", "-"
        )
        assert done.code == 0, done.stderr
        docs.append(json.loads(done.stdout))
    assert docs[0]["checks"][0]["kappa_interval"] == docs[1]["checks"][0]["kappa_interval"]


def test_zero_pairs_exits_2_and_says_why(results: Path, tmp_path: Path) -> None:
    other = [{**lb, "output_hash": output_hash("another output")} for lb in _labels(results, HUMAN)]
    labels = _write_labels(tmp_path / "labels.jsonl", other)
    out = tmp_path / "agreement.json"
    done = scorewire("agreement", str(results), "--labels", str(labels), "--json", str(out))
    assert done.code == 2
    assert "no output has both a judge verdict and a human label" in done.stderr
    assert not out.exists()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--check", "contains"], "not a judge-backed check"),
        (["--labels", "/nonexistent/labels.jsonl"], "cannot read labels file"),
    ],
)
def test_usage_errors_exit_2(results: Path, tmp_path: Path, args: list[str], message: str) -> None:
    labels = _write_labels(tmp_path / "labels.jsonl", _labels(results, HUMAN))
    if "--labels" not in args:
        args = [*args, "--labels", str(labels)]
    done = scorewire("agreement", str(results), *args)
    assert done.code == 2 and message in done.stderr


def test_calibrate_recommends_the_best_threshold_and_costs_per_pair(
    results: Path, tmp_path: Path
) -> None:
    # people agree exactly with "great": every threshold above 0 has kappa 1
    human = {0: True, 1: True, 2: False, 3: False, 4: True}
    labels = _write_labels(tmp_path / "labels.jsonl", _labels(results, human))
    done = scorewire("calibrate", str(results), "--labels", str(labels), "--json", "-")
    assert done.code == 0, done.stderr
    [check] = json.loads(done.stdout)["checks"]
    assert [p["threshold"] for p in check["points"]] == [0.0, 1.0]
    assert check["recommended_threshold"] == 1.0 and check["recommended_kappa"] == 1.0
    cost = json.loads(results.read_text())["summary"]["judge_cost_usd"]
    assert check["cost_per_pair_usd"] == pytest.approx(cost / 5)
    # `sentiment` grades on a fixed 1..5 scale: levels 2 to 5 all split 1 from 5 as people
    # do, and the tie goes to the lowest bar
    assert (check["scale"], check["recommended_pass_level"]) == (5, 2)
    assert check["pass_level_point"]["kappa"] == 1.0


def test_agreement_reads_labels_from_a_server(
    results: Path, tmp_path: Path, server_addr: str
) -> None:
    with grpc.insecure_channel(server_addr) as channel:
        stub = labels_pb2_grpc.LabelServiceStub(channel)
        stub.PutLabels(
            labels_pb2.PutLabelsRequest(
                labels=[
                    labels_pb2.Label(
                        sample_id=lb["sample_id"],
                        output_hash=lb["output_hash"],
                        passed=lb["passed"],
                        labeller="ana",
                        check="tone",
                    )
                    for lb in _labels(results, HUMAN)
                ]
            ),
            timeout=10,
        )
    done = scorewire(
        "agreement", str(results), "--server", server_addr, "--label-check", "tone", "--json", "-"
    )
    assert done.code == 0, done.stderr
    assert json.loads(done.stdout)["checks"][0]["kappa"] == pytest.approx(1 / 6)


def test_calibrate_proposes_a_judge_checks_pass_level_only_with_its_scale(tmp_path: Path) -> None:
    # a `judge` check on a 1..3 scale (values 0, 0.5, 1); people pass levels 2 and 3
    values = {"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.5}
    rows = [
        {
            "sample_id": s,
            "output": s,
            "scores": [{"name": "tone", "type": "judge", "value": v, "passed": v == 1.0}],
        }
        for s, v in values.items()
    ]
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"format": "scorewire.results/1", "results": rows}))
    labels = _write_labels(
        tmp_path / "labels.jsonl",
        [
            {"sample_id": s, "output_hash": output_hash(s), "passed": v > 0, "labeller": "ana"}
            for s, v in values.items()
        ],
    )
    unknown = scorewire("calibrate", str(results), "--labels", str(labels), "--json", "-")
    assert unknown.code == 0, unknown.stderr
    [check] = json.loads(unknown.stdout)["checks"]
    # the file holds no `scale` parameter: no pass level is guessed
    assert check["scale"] is None and check["recommended_pass_level"] is None
    given = scorewire(
        "calibrate", str(results), "--labels", str(labels), "--scale", "3", "--json", "-"
    )
    assert given.code == 0, given.stderr
    [check] = json.loads(given.stdout)["checks"]
    assert (check["scale"], check["recommended_pass_level"]) == (3, 2)
    assert "recommended pass_level 2 of 3" in given.stderr + given.stdout
    bad = scorewire("calibrate", str(results), "--labels", str(labels), "--scale", "1")
    assert bad.code == 2 and "--scale" in bad.stderr
