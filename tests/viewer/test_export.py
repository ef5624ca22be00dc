"""The downloads' text (CSV a spreadsheet cannot run, JSON as the page's cases) and the
compare page's word diffs."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest
from scorewire.viewer import CaseChange, CaseResult, ScoreResult, render
from scorewire.viewer.diffs import MAX_WORDS, word_diff
from scorewire.viewer.export import cases_csv, cases_json
from scorewire.viewer.render import changes_json


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


def test_a_word_diff_joins_back_into_the_new_text_and_ignores_spacing() -> None:
    # kept + inserted runs are the new text; a word that only moved line is kept
    before, after = "the  cat sat\non the mat", "the dog sat on\na mat today"
    ops = word_diff(before, after)
    assert ops is not None
    assert "".join(t for op, t in ops if op != "-") == after
    assert [t.split() for op, t in ops if op == "-"] == [["cat"], ["the"]]
    assert [t.split() for op, t in ops if op == "+"] == [["dog"], ["a"], ["today"]]


def test_no_diff_past_the_word_limit() -> None:
    # quadratic at worst: two long texts get none rather than a slow page
    long = "w " * MAX_WORDS
    assert word_diff(long, long + "x") is None
    assert word_diff("a", "b") == [("-", "a"), ("+", "b")]


def test_a_long_repetitive_diff_is_fast() -> None:
    # 2,000 words of two distinct words: minutes without difflib's autojunk
    started = time.monotonic()
    ops = word_diff("a " * 2000, "a b " * 1000)
    assert ops is not None and time.monotonic() - started < 2.0
    assert "".join(t for op, t in ops if op != "-") == "a b " * 1000


def test_past_the_pages_diff_budget_changes_have_no_diff(monkeypatch: pytest.MonkeyPatch) -> None:
    # the compare page spends at most PAGE_BUDGET_S on diffs; the rest show plain outputs
    base = CaseResult(0, "s", None, None, "old words", True, [])
    now = CaseResult(0, "s", None, None, "new words", True, [])
    change = [CaseChange("changed", "s", base, now)]
    assert json.loads(str(changes_json(change)))[0]["diff"] == [
        ["-", "old "],
        ["+", "new "],
        ["=", "words"],
    ]
    monkeypatch.setattr(render, "PAGE_BUDGET_S", -1.0)
    assert json.loads(str(changes_json(change)))[0]["diff"] is None
