"""Results files as a RunSource: reading, listing newest first, filters, unknown ids."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from scorewire.viewer import InvalidResults, ResultsDirectory, ResultsFile, RunNotFound
from scorewire.viewer.run_views import assertion_stats

from tests.viewer.conftest import KnownRuns


def test_a_results_file_reads_as_its_run(known_runs: KnownRuns) -> None:
    source = ResultsFile(known_runs.new)
    run = source.get_run("new")
    assert (run.info.name, run.info.cases, run.cases_passed) == ("capitals", 12, 11)
    assert run.info.labels == {"model": "m2"} and not run.info.gate_passed
    assert [(c.name, c.passed, c.failed) for c in run.checks] == [
        ("contains", 11, 1),
        ("starts_with", 4, 0),
    ]
    failing = source.results("new", outcome="failed")
    assert [c.sample_id for c in failing] == ["t0/p1/echo:b"]
    assert failing[0].output == "Lyon" and failing[0].provider == "echo:b"
    # a check filter with no outcome: every case that has that check
    assert len(source.results("new", check="starts_with")) == 4


def test_a_directory_lists_results_files_newest_first_and_skips_others(
    known_runs: KnownRuns,
) -> None:
    # notes.json is JSON but not a results file: left out, not an error
    runs = ResultsDirectory(known_runs.root).list_runs()
    assert [r.id for r in runs] == ["qa", "nightly/new", "base"]


def test_a_changed_file_is_read_again(known_runs: KnownRuns, tmp_path: Path) -> None:
    copy = tmp_path / "r.json"
    copy.write_text(known_runs.qa.read_text())
    source = ResultsDirectory(tmp_path)
    assert source.get_run("r").info.cases == 2
    doc = json.loads(copy.read_text())
    doc["results"] = doc["results"][:1]
    doc["summary"]["cases"] = 1
    copy.write_text(json.dumps(doc))
    os.utime(copy, (1, 1))  # another stamp even on a coarse clock
    assert source.get_run("r").info.cases == 1
    assert len(source.results("r")) == 1


@pytest.mark.parametrize("run_id", ["nope", "../base", "/etc/passwd", "notes", ""])
def test_ids_not_listed_are_not_found(known_runs: KnownRuns, run_id: str) -> None:
    # only ids found by listing are opened: no path leaves the directory
    with pytest.raises(RunNotFound):
        ResultsDirectory(known_runs.root / "nightly").get_run(run_id)


def test_a_file_that_is_not_results_is_refused_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"format": "other"}')
    with pytest.raises(InvalidResults, match=r"x\.json: not a scorewire results file"):
        ResultsFile(bad)


@pytest.mark.parametrize("run_id", ["base", "new", "qa"])
def test_assertion_rows_add_up_to_the_summarys_checks(known_runs: KnownRuns, run_id: str) -> None:
    # The viewer counts a checkllm run's rows per test from its cases; added up by name
    # they are the summary the engine counted (counts, cost, cache, mean): the two
    # countings cannot drift apart. qa (evalstone) keeps the summary's rows as they are.
    path = {"base": known_runs.base, "new": known_runs.new, "qa": known_runs.qa}[run_id]
    source = ResultsFile(path)
    detail = source.get_run(run_id)
    rows = assertion_stats(detail.checks, source.results(run_id))
    if run_id == "qa":
        assert rows == detail.checks
        return
    assert all(r.test for r in rows) and len(rows) > len(detail.checks)
    for check in detail.checks:
        mine = [r for r in rows if r.name == check.name]
        fields = ("passed", "failed", "errored", "skipped", "cached")
        assert [sum(getattr(r, f) for r in mine) for f in fields] == [
            getattr(check, f) for f in fields
        ]
        assert sum(r.cost_usd for r in mine) == pytest.approx(check.cost_usd)
        value_sum = sum(r.mean_value * r.total for r in mine)
        assert value_sum == pytest.approx(check.mean_value * check.total)
