"""The in-process Python API: score() and run_suite_file() with no server."""

import json
from pathlib import Path

import pytest
from scorewire.api import compile_plan, run_suite_file, score
from scorewire.core.errors import SpecError


def test_score_with_mappings_and_compact_lines() -> None:
    # Checks written as in YAML, compact lines after them, one Score each in order.
    scores = score(
        "The capital is Paris.",
        [{"type": "contains", "needles": ["Paris"]}, {"type": "exact"}],
        compact=["length:1..5"],
        sample={"id": "s1", "expected": "Paris"},
    )
    assert [s.passed for s in scores] == [True, False, False]
    assert scores[1].error is None  # the sample's expected is the reference


def test_bad_checks_raise_every_problem_with_its_path() -> None:
    # Unknown parameters and unsafe compact lines are reported together.
    with pytest.raises(SpecError) as err:
        score("x", [{"type": "length", "max_wrds": 3}], compact=["regex:(?<=a)b"])
    fields = [v.field for v in err.value.violations]
    assert fields[0] == "checks[0].max_wrds" and fields[1].startswith("compact[0]")


def test_checks_take_the_nested_params_shape_too() -> None:
    # the clients' canonical shape works in process; error paths then say params
    (got,) = score("Paris", [{"type": "contains", "params": {"needles": ["Paris"]}}])
    assert got.passed and got.error is None
    with pytest.raises(SpecError) as err:
        score("Paris", [{"type": "contains", "params": {"needels": ["x"]}}])
    assert err.value.violations[0].field == "checks[0].params.needels"


def test_both_check_shapes_at_once_is_an_error_naming_params() -> None:
    # parameters under params and beside type: which did the caller mean?
    with pytest.raises(SpecError) as err:
        score("Paris", [{"type": "contains", "params": {"needles": ["a"]}, "needles": ["b"]}])
    (v,) = err.value.violations
    assert v.field == "checks[0].params" and "needles" in v.description


def test_a_compiled_plan_is_reused() -> None:
    # compile once, score many outputs.
    plan = compile_plan(compact=["contains:ok"])
    assert [score(t, plan)[0].passed for t in ("ok", "no")] == [True, False]


def test_python_checks_take_a_function_in_process() -> None:
    # The `python` type exists only in the in-process API.
    scores = score("hello", [{"type": "python", "fn": lambda s, o: o.text.startswith("he")}])
    assert scores[0].passed


def test_run_suite_file(tmp_path: Path) -> None:
    # A suite file with a JSONL dataset runs to per-case results and a gated summary.
    rows = [{"id": "a", "output": "Paris"}, {"id": "b", "output": "Rome"}]
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows))
    (tmp_path / "s.yaml").write_text(
        "checks:\n  paris: {type: contains, needles: [Paris]}\n"
        "datasets:\n  qa: qa.jsonl\n"
        "suites:\n  smoke: {dataset: qa, gate: {min_pass_rate: 0.4}}\n"
    )
    results, summary = run_suite_file(tmp_path / "s.yaml")
    assert [r.sample_id for r in results] == ["a", "b"]
    assert summary.cases_passed == 1 and summary.gate_passed


def test_run_suite_file_refuses_a_judge_it_cannot_call(tmp_path: Path, monkeypatch) -> None:
    # preflight: a judge check with no judge, or with a judge whose backend has no
    # credentials, is refused before any call, naming the check and the setting
    from scorewire.core.errors import PreconditionError
    from scorewire.judge import JudgeService
    from scorewire.settings import Settings

    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "output": "Paris"}) + "\n")
    (tmp_path / "s.yaml").write_text(
        "checks:\n  tone: {type: judge, rubric: 'polite?', model: 'anthropic:claude-haiku-4-5'}\n"
        "datasets:\n  qa: qa.jsonl\n"
        "suites:\n  smoke: {dataset: qa}\n"
    )
    with pytest.raises(PreconditionError) as caught:
        run_suite_file(tmp_path / "s.yaml")
    assert [p.field for p in caught.value.problems] == ["checks.tone"]
    judge = JudgeService.from_settings(Settings(metrics_enabled=False))
    with pytest.raises(PreconditionError) as caught:
        run_suite_file(tmp_path / "s.yaml", judge=judge)
    (problem,) = caught.value.problems
    assert problem.setting == "SCOREWIRE_ANTHROPIC_API_KEY" and problem.kind == "CREDENTIALS"
    assert "anthropic judge backend is not configured" in problem.description


def test_run_suite_file_runs_a_checkllm_file_as_the_cli_does(tmp_path: Path) -> None:
    # a checkllm file (it has tests:) is recognised: every test × prompt × provider runs,
    # recorded outputs for one provider, the free echo provider generating the other's
    (tmp_path / "eval.yaml").write_text(
        'prompts: ["Say {{word}}", "Repeat {{word}}"]\n'
        "providers: [echo, 'openai:gpt-4o']\n"
        "tests:\n"
        "  - vars: {word: Paris}\n"
        "    outputs: {'openai:gpt-4o': Paris}\n"
        "    assert: [{type: contains, value: Paris}]\n"
        "  - vars: {word: Rome}\n"
        "    outputs: {'openai:gpt-4o': [Rome, Milan]}\n"
        "    assert: [{type: contains, value: Rome}]\n"
    )
    results, summary = run_suite_file(tmp_path / "eval.yaml")
    assert [r.sample_id for r in results] == [
        "t0/p0/echo",
        "t0/p0/openai:gpt-4o",
        "t0/p1/echo",
        "t0/p1/openai:gpt-4o",
        "t1/p0/echo",
        "t1/p0/openai:gpt-4o",
        "t1/p1/echo",
        "t1/p1/openai:gpt-4o",
    ]
    assert [r.passed for r in results] == [True] * 7 + [False]
    assert summary.cases == 8 and not summary.gate_passed  # checkllm: every test must pass
    with pytest.raises(SpecError):
        run_suite_file(tmp_path / "eval.yaml", suite="smoke")


def test_run_batch_scores_plain_dicts_in_order_with_a_summary() -> None:
    from scorewire.api import run_batch
    from scorewire.engine.summary import Gate

    cases = [
        {"sample": {"id": "a", "expected": {"answer": "Paris"}}, "output": "Paris"},
        ({"id": "b", "expected": {"answer": {"n": 1}}}, {"text": '{"n": 1.0}'}),
        {"sample": {"id": "c", "expected": {"answer": "Rome"}}, "output": {"value": None}},
    ]
    results, summary = run_batch(
        cases, [{"type": "exact", "path": "answer"}], gate=Gate(min_pass_rate=0.9)
    )
    assert [r.sample_id for r in results] == ["a", "b", "c"]
    assert [r.index for r in results] == [0, 1, 2]
    assert [r.passed for r in results] == [True, True, False]
    assert (summary.cases, summary.passed, summary.failed) == (3, 2, 1)
    assert not summary.gate_passed and "pass rate" in summary.gate_reasons[0]


def test_run_batch_names_the_malformed_case() -> None:
    from scorewire.api import run_batch

    good = {"sample": {"id": "a"}, "output": "x"}
    with pytest.raises(ValueError, match=r"cases\[1\]\.sample: unknown key\(s\) \['expectd'\]"):
        run_batch([good, {"sample": {"expectd": 1}, "output": "x"}], compact=["length:1..5"])
    with pytest.raises(ValueError, match=r"cases\[0\]: unknown key\(s\) \['outptu'\]"):
        run_batch([{"sample": {}, "outptu": "x"}], compact=["length:1..5"])
    with pytest.raises(ValueError, match=r"cases\[0\]\.output: an output is"):
        run_batch([{"output": 3}], compact=["length:1..5"])


def test_run_batch_runs_async_checks_and_keeps_input_order() -> None:
    import asyncio

    from scorewire.api import run_batch

    async def slow_first(sample, output) -> bool:
        # the first case finishes last, so completion order differs from input order
        await asyncio.sleep(0.05 if sample.id == "s0" else 0)
        return output.text == "ok"

    cases = [{"sample": {"id": f"s{i}"}, "output": "ok" if i % 2 else "no"} for i in range(5)]
    results, summary = run_batch(cases, [{"type": "python", "fn": slow_first}])
    assert [r.sample_id for r in results] == [f"s{i}" for i in range(5)]
    assert [r.passed for r in results] == [False, True, False, True, False]
    assert summary.cases == 5 and summary.passed == 2


def test_run_batch_does_not_pass_a_baseline_gate_it_cannot_compare() -> None:
    # In process there is no run store: a gate with a baseline is never a silent pass.
    from scorewire.api import run_batch
    from scorewire.engine.summary import Gate

    _, summary = run_batch(
        [{"sample": {"id": "a"}, "output": "ok"}], compact=["length:1..5"], gate=Gate(baseline="r1")
    )
    assert summary.passed == 1 and not summary.gate_passed
    assert "gate.baseline 'r1' was not compared" in summary.gate_reasons[-1]
