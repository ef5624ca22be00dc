"""The report's features beside promptfoo's and Inspect's viewers, in headless Chromium:
outputs in the prompt × provider cells, text search, the compare page's filter and word
diffs, pass rate over time, and a judge's reasoning. The report is the one `scorewire
view` writes (the served pages draw the same templates; test_store_served.py serves them)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.viewer.conftest import LONG_NEW, XSS_OUTPUT, KnownRuns, screenshot
from tests.viewer.test_offline import view

REASONING = "The answer names Paris <b>correctly</b>; the rubric's first point holds."


@pytest.fixture(scope="module")
def report(known_runs: KnownRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new run compared with the base run, as test_offline's report."""
    out = tmp_path_factory.mktemp("features") / "report.html"
    done = view(str(known_runs.new), "--output", str(out), "--compare", str(known_runs.base))
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def crafted(known_runs: KnownRuns, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The new run with a passing judge score (reason and spread) on t0/p0/echo:a, compared
    with a base whose t1/p0/echo:a answered plain text where the new one holds markup."""
    tmp = tmp_path_factory.mktemp("crafted")
    new = json.loads(known_runs.new.read_text())
    case = next(r for r in new["results"] if r["sample_id"] == "t0/p0/echo:a")
    case["scores"].append(
        {**case["scores"][0], "name": "rubric", "type": "judge", "value": 1.0,
         "reason": REASONING, "cost_usd": 0.002, "latency_ms": 812.0,
         "spread": {"samples": 3, "stdev": 0.47, "agreement": 0.667, "values": [1, 1, 0]},
         "judge": {"models": ["openai:gpt-4o-mini"], "reported_models": ["gpt-4o-mini-2024-07-18"],
                   "prompt_version": "2"}}
    )  # fmt: skip
    base = json.loads(known_runs.base.read_text())
    old = next(r for r in base["results"] if r["sample_id"] == "t1/p0/echo:a")
    old["output"] = "plain hello"
    paths = tmp / "new.json", tmp / "base.json", tmp / "report.html"
    paths[0].write_text(json.dumps(new))
    paths[1].write_text(json.dumps(base))
    done = view(str(paths[0]), "--output", str(paths[2]), "--compare", str(paths[1]))
    assert done.returncode == 0, done.stderr
    return paths[2]


def test_a_matrix_cell_shows_its_outputs_and_folds_long_ones(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    cell = page.locator("#matrix tr[data-prompt=p1] td[data-provider='echo:b']")
    outputs = cell.locator("ul.outputs > li[data-case]")
    assert outputs.evaluate_all("ls => ls.map(l => l.dataset.case)") == [
        "t0/p1/echo:b", "t1/p1/echo:b", "t2/p1/echo:b",
    ]  # fmt: skip
    lyon = outputs.nth(0)
    assert "failed" in lyon.locator(".badge").inner_text() and "Lyon" in lyon.inner_text()
    assert "ms" in lyon.locator(".sub").inner_text()  # the output's latency
    # the long output is cut to 120 characters until it is opened
    long = outputs.nth(2).locator("details.fold")
    assert len(long.locator("summary").inner_text()) == 121 and "END" not in long.inner_text()
    long.locator("summary").click()
    assert long.locator("pre").inner_text() == LONG_NEW
    # markup in an output is text in the cell too
    assert page.evaluate("window.__xss") is None
    assert XSS_OUTPUT in outputs.nth(1).inner_text()
    screenshot(page, "report-matrix-outputs")


def test_text_search_finds_cases_by_input_output_and_reason(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    page.select_option("#filter-outcome", "all")
    rows = page.locator("#case-table tbody tr")
    sids = lambda: rows.evaluate_all("rs => rs.map(r => r.querySelector('.sid').textContent)")  # noqa: E731
    page.fill("#filter-q", "LYON")  # output, any case
    assert sids() == ["t0/p1/echo:b"] and page.locator("#case-count").inner_text() == "1 case"
    page.fill("#filter-q", "<b>hi</b>")  # input (the test's vars)
    assert sids() == ["t1/p0/echo:a", "t1/p0/echo:b", "t1/p1/echo:a", "t1/p1/echo:b"]
    page.fill("#filter-q", "missing 'Paris'")  # a score's reason
    assert sids() == ["t0/p1/echo:b"]
    page.select_option("#filter-outcome", "passed")  # and the outcome filter still holds
    assert rows.count() == 0 and page.locator("#no-cases").is_visible()
    page.fill("#filter-q", "")
    assert rows.count() == 11


def test_the_compare_page_marks_the_words_that_changed(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    lyon = page.locator("#change-table tr[data-key='t0/p1/echo:b']")
    assert lyon.locator("pre.diff del").all_inner_texts() == ["Paris!"]
    assert lyon.locator("pre.diff ins").all_inner_texts() == ["Lyon"]
    long = page.locator("#change-table tr[data-key='t2/p0/echo:a']")
    assert long.locator("pre.diff ins").all_inner_texts() == ["END"]
    assert long.locator("pre.diff del").count() == 0
    # the 1,200 unchanged characters before it are cut to the 40 beside the change
    skipped = long.locator("pre.diff .skip")
    assert skipped.inner_text() == "… 1160 unchanged characters …"
    assert long.locator("pre.diff").inner_text().endswith("lorem ipsum lorem ipsum END")
    page.locator("#compare").scroll_into_view_if_needed()
    screenshot(page, "report-compare-diff")


def test_a_diff_of_markup_is_text(page: Any, crafted: Path) -> None:
    page.goto(crafted.as_uri())
    row = page.locator("#change-table tr[data-key='t1/p0/echo:a']")
    inserted = "".join(row.locator("pre.diff ins").all_inner_texts())
    assert "<script>window.__xss = 1</script>" in inserted
    assert row.locator("pre.diff del").all_inner_texts() == ["plain "]
    assert page.evaluate("window.__xss") is None and page.locator("pre.diff img").count() == 0


def test_the_compare_filter_shows_failures_or_changed_outputs(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    rows = page.locator("#change-table tbody tr")
    keys = lambda: rows.evaluate_all("rs => rs.map(r => r.dataset.key)")  # noqa: E731
    assert rows.count() == 5 and page.locator("#change-count").inner_text() == "5 of 5 changes"
    page.select_option("#change-kind", "failing")
    assert keys() == ["t0/p1/echo:b"]
    page.select_option("#change-kind", "output")  # all five changed their output
    assert rows.count() == 5
    page.fill("#change-q", "end")
    assert keys() == ["t2/p0/echo:a", "t2/p0/echo:b", "t2/p1/echo:a", "t2/p1/echo:b"]
    page.fill("#change-q", "no such text")
    assert rows.count() == 0 and page.locator("#no-changes").is_visible()


def test_the_runs_list_charts_pass_rate_over_time(page: Any, report: Path) -> None:
    page.goto(report.as_uri())
    chart = page.locator("#trends tr[data-trend=capitals] svg.trend")
    dots = chart.locator("circle")
    # oldest (base, 66.7 %) left, newest (new, 91.7 %) right and higher
    assert dots.evaluate_all("cs => cs.map(c => c.dataset.run)") == ["base", "new"]
    (x0, y0), (x1, y1) = dots.evaluate_all(
        "cs => cs.map(c => [c.cx.baseVal.value, c.cy.baseVal.value])"
    )
    assert x0 < x1 and y1 < y0
    assert abs((y0 - y1) - 0.25 * 40) < 0.2  # 25 points of a 40-unit-high plot
    assert "66.7%, 91.7%" in (chart.get_attribute("aria-label") or "")
    assert chart.locator("polyline").get_attribute("points") is not None
    screenshot(page, "report-trend")


def test_a_passing_judges_reasoning_and_spread_are_one_click_away(page: Any, crafted: Path) -> None:
    page.goto(crafted.as_uri())
    page.select_option("#filter-outcome", "all")
    row = page.locator("#case-table tbody tr", has_text="t0/p0/echo:a")
    judged = row.locator("li[data-score=rubric] details.reasoning")
    assert judged.get_attribute("open") is None
    judged.locator("summary").click()
    assert judged.locator(".reason").inner_text() == REASONING  # as text, not markup
    assert judged.locator(".spread").inner_text() == "3 samples, 67% agree (1, 1, 0)"
    assert judged.locator(".judged-by").inner_text() == (
        "judged by openai:gpt-4o-mini (answered as gpt-4o-mini-2024-07-18) · prompt 2"
    )
    # a passing deterministic check stays a name in the passed list
    assert "contains" in row.locator("li.passed-list").inner_text()
    assert row.locator("li[data-score=contains]").count() == 0
    screenshot(page, "report-judge-reasoning")
