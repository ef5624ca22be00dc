"""The downloads' text: CSV a spreadsheet cannot run, JSON as the page's cases."""

from __future__ import annotations

import csv
import io
import json

import pytest
from scorewire.viewer import CaseResult, ScoreResult
from scorewire.viewer.diffs import MAX_WORDS, word_diff
from scorewire.viewer.export import cases_csv, cases_json


def _case(output: str) -> CaseResult:
    score = ScoreResult("c", "contains", 0.0, False, "=1+1 is not there")
    return CaseResult(0, "s0", {"q": "-2"}, "@home", output, False, [score])


@pytest.mark.parametrize("output", ['=HYPERLINK("http://x")', "+1", "-1", "@SUM(A1)", "\tx"])
def test_a_cell_that_would_be_a_formula_is_text(output: str) -> None:
    # CSV injection: the output, the expected answer and the reason all start a formula
    (row,) = csv.DictReader(io.StringIO(cases_csv([_case(output)])))
    assert row["output"] == "'" + output
    assert row["expected"] == "'@home" and row["reason"] == "'=1+1 is not there"
    assert row["input"] == '{"q": "-2"}'  # JSON starts with a brace: left as it is


def test_a_case_without_scores_is_one_row() -> None:
    case = CaseResult(3, "s3", "q", None, "out", True, [])
    (row,) = csv.DictReader(io.StringIO(cases_csv([case])))
    assert (row["index"], row["check"], row["outcome"]) == ("3", "", "passed")


def test_json_names_the_run_and_filter() -> None:
    doc = json.loads(cases_json("r1", {"q": "x"}, [_case("a")]))
    assert doc["run"] == "r1" and doc["filter"] == {"q": "x"}
    assert doc["cases"][0]["scores"][0]["outcome"] == "failed"


def test_a_word_diff_joins_back_into_both_texts() -> None:
    # spaces are tokens: kept + deleted runs give the base, kept + inserted the new text
    before, after = "the  cat sat\non the mat", "the dog sat\non a mat today"
    ops = word_diff(before, after)
    assert ops is not None
    assert "".join(t for op, t in ops if op != "+") == before
    assert "".join(t for op, t in ops if op != "-") == after
    assert ("-", "  cat") in ops and ("+", " dog") in ops and ("+", "a") in ops


def test_no_diff_past_the_word_limit() -> None:
    # quadratic at worst: two long texts get none rather than a slow page
    long = "w " * MAX_WORDS
    assert word_diff(long, long + "x") is None
    assert word_diff("a", "b") == [("-", "a"), ("+", "b")]
