"""`scorewire view` writes one self-contained HTML file; opened from file:// in Chromium it
shows the known run, filters in the page, fetches nothing and runs no script from results."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import ROOT, cli_env, run_cli
from tests.viewer.conftest import XSS_OUTPUT, KnownRuns, screenshot


def view(*args: str) -> subprocess.CompletedProcess[str]:
    """`scorewire view ARGS` as a subprocess."""
    return subprocess.run(
        [sys.executable, "-m", "scorewire.cli.main", "view", *args],
        capture_output=True,
        text=True,
        env=cli_env(),
        cwd=ROOT,
        timeout=60,
    )


@pytest.fixture(scope="module")
def report(known_runs: KnownRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new run's report, compared with the base run."""
    out = tmp_path_factory.mktemp("report") / "report.html"
    done = view(str(known_runs.new), "--output", str(out), "--compare", str(known_runs.base))
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip() == f"scorewire view: wrote {out} (12 cases)"
    return out


def _open(page: Any, path: Path) -> list[str]:
    """Open the file and return every URL the page requested."""
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(path.as_uri())
    return requests


def test_the_report_opens_from_a_file_and_requests_nothing_else(page: Any, report: Path) -> None:
    requests = _open(page, report)
    assert requests == [report.as_uri()]
    run = page.locator("section.run")
    assert run.locator("[data-stat=cases]").inner_text() == "11/12"
    assert run.locator("[data-stat=pass-rate]").inner_text() == "91.7%"
    assert run.locator("#gate").inner_text().startswith("Gate: failed")
    assert "pass rate 0.9167 is below" in run.locator("#gate").inner_text()
    # One row per test and assertion, as the CLI's table: `contains` of three tests is
    # three rows (it was one, 11 of 12), the capital test's 3 of 4 (Lyon fails).
    rows = run.locator("table.checks tr[data-check=contains]")
    assert rows.evaluate_all("rs => rs.map(r => r.dataset.test)") == [
        "0 capital", "1 markup", "2 long",
    ]  # fmt: skip
    capital = run.locator("table.checks tr[data-check=contains][data-test='0 capital']")
    assert "75.0%" in capital.inner_text()
    width = capital.locator(".bar .fill").evaluate("e => e.style.width")
    assert width == "75%"


def test_the_matrix_shows_pass_rates_per_prompt_and_provider(page: Any, report: Path) -> None:
    _open(page, report)
    matrix = page.locator("#matrix table.matrix")
    assert matrix.locator("thead th").all_inner_texts()[1:] == ["echo:a", "echo:b"]
    cell = matrix.locator("tr[data-prompt=p1] td[data-provider='echo:b']")
    assert "66.7%" in cell.inner_text() and "2/3" in cell.inner_text()
    other = matrix.locator("tr[data-prompt=p0] td[data-provider='echo:b']")
    assert "100.0%" in other.inner_text()
    cell.locator("details.asserts summary").click()
    per_assert = cell.locator("tr[data-assert=contains]")
    assert per_assert.is_visible() and "2/3" in per_assert.inner_text()
    screenshot(page, "offline-matrix")


def test_filters_by_check_and_outcome_work_in_the_page(page: Any, report: Path) -> None:
    _open(page, report)
    rows = page.locator("#case-table tbody tr:visible")
    # first the failing cases: the one regression
    assert rows.count() == 1 and "t0/p1/echo:b" in rows.first.inner_text()
    assert page.locator("#case-count").inner_text() == "1 case"
    assert "Lyon" in rows.first.inner_text() and "Paris" in rows.first.inner_text()
    page.select_option("#filter-outcome", "all")
    assert rows.count() == 12
    page.select_option("#filter-check", "starts_with")
    page.select_option("#filter-outcome", "passed")
    assert rows.count() == 4
    assert all(t.split("\n")[1].startswith("t2/") for t in rows.all_inner_texts())
    page.select_option("#filter-outcome", "errored")
    assert rows.count() == 0 and page.locator("#no-cases").is_visible()


def test_outputs_are_escaped_and_never_run(page: Any, report: Path) -> None:
    # an output holding <script> and an onerror handler is shown as text
    _open(page, report)
    page.select_option("#filter-outcome", "all")
    assert page.evaluate("window.__xss") is None
    assert page.locator("script:not([type='application/json'])").count() == 1  # its own
    assert page.locator("#case-table img").count() == 0
    assert page.get_by_text(XSS_OUTPUT).first.is_visible()


def test_long_outputs_are_folded(page: Any, report: Path) -> None:
    _open(page, report)
    page.select_option("#filter-outcome", "all")
    row = page.locator("#case-table tbody tr", has_text="t2/p0/echo:a")
    fold = row.locator("details.fold").last
    assert fold.get_attribute("open") is None
    assert "characters)" in fold.locator("summary").inner_text()
    assert not fold.locator("pre").is_visible()
    fold.locator("summary").click()
    assert fold.locator("pre").is_visible()


def test_the_compare_section_lists_the_regression_first(page: Any, report: Path) -> None:
    _open(page, report)
    changes = page.locator("#change-table tbody tr")
    first = changes.first
    assert first.get_attribute("data-kind") == "regressed"
    assert first.get_attribute("data-key") == "t0/p1/echo:b"
    assert "passed → failed" in first.inner_text()
    assert [changes.nth(i).get_attribute("data-kind") for i in range(1, 5)] == ["improved"] * 4
    counts = page.locator("#change-counts").inner_text()
    assert "1 regressed" in counts and "4 improved" in counts
    delta = page.locator("#compare table.deltas tr[data-check=contains] td.delta")
    assert delta.inner_text() == "+25.0 pt"  # 66.7 % -> 91.7 %
    page.locator("#compare").scroll_into_view_if_needed()
    screenshot(page, "offline-compare")


def test_the_runs_list_sorts_by_clicking_a_header(page: Any, report: Path) -> None:
    _open(page, report)
    names = page.locator("#runs tbody tr")
    header = page.locator("#runs thead th", has_text="pass rate")
    header.click()
    assert [names.nth(i).get_attribute("data-run") for i in range(2)] == ["base", "new"]
    assert header.get_attribute("aria-sort") == "ascending"
    header.click()
    assert [names.nth(i).get_attribute("data-run") for i in range(2)] == ["new", "base"]
    # the run links to its section, the base run to the compare section
    assert names.nth(0).locator("a").get_attribute("href") == "#run-new"
    assert names.nth(1).locator("a").get_attribute("href") == "#compare"


def test_a_file_that_is_not_results_exits_2_with_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "suite.yaml"
    bad.write_text("tests: []\n")
    done = view(str(bad), "--output", str(tmp_path / "r.html"))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"scorewire view: {bad}: not JSON (Expecting value: line 1 column 1 (char 0))"
    ]
    assert not (tmp_path / "r.html").exists()


def test_a_large_run_draws_its_cases_a_page_at_a_time(page: Any, tmp_path: Path) -> None:
    # 450 failing cases: 200 drawn at first, then 200 more, then the last 50
    rows = [{"id": f"s{i}", "input": i, "output": "no"} for i in range(450)]
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    suite = tmp_path / "s.yaml"
    suite.write_text(
        "checks: {says_ok: {type: contains, needles: [ok]}}\n"
        "datasets: {qa: {path: qa.jsonl}}\n"
        "suites: {big: {dataset: qa, checks: [says_ok]}}\n"
    )
    results, report = tmp_path / "r.json", tmp_path / "r.html"
    # (the default evalstone gate passes: no score errored)
    assert run_cli("run", str(suite), "--output", str(results), cwd=tmp_path).code == 0
    assert view(str(results), "--output", str(report)).returncode == 0
    page.goto(report.as_uri())
    drawn = page.locator("#case-table tbody tr")
    more = page.locator("#more-cases")
    assert drawn.count() == 200 and page.locator("#case-count").inner_text() == "450 cases"
    assert more.inner_text() == "show 200 more of 250"
    more.click()
    assert drawn.count() == 400
    more.click()
    assert drawn.count() == 450 and more.is_hidden()
    assert drawn.last.locator(".sid").inner_text() == "s449"
