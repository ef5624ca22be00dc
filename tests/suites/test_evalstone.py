"""Suites in the evalstone.yaml shape: every kind of load error, datasets, gates, imports."""

import json
import sys
import textwrap
from pathlib import Path

import pytest
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.errors import SpecError
from scorewire.core.model import Output, Sample
from scorewire.core.registry import REGISTRY
from scorewire.engine.custom import DuplicateCheckError, check, load_imports
from scorewire.engine.execute import run_check_sync
from scorewire.engine.runner import run_cases
from scorewire.engine.summary import SummaryBuilder
from scorewire.suites.evalstone import load_suite_file, load_suite_text


def fields(text: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        load_suite_text(textwrap.dedent(text))
    return [v.field for v in err.value.violations]


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        # An unknown parameter names the check key and the parameter.
        ("checks:\n  short: {type: length, max_wrds: 3}\n", ["checks.short.max_wrds"]),
        # An unknown check type names the type field.
        ("checks:\n  a: {type: lenght}\n", ["checks.a.type"]),
        # A check without a type.
        ("checks:\n  a: {max_chars: 3}\n", ["checks.a.type"]),
        # An unknown top-level key.
        ("checks: {}\nsuits: {}\n", ["suits"]),
        # An unknown key in a suite.
        (
            "checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  s: {chekcs: [a]}\n",
            ["suites.s.chekcs"],
        ),
        # A suite naming a check that does not exist.
        (
            "checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  s: {checks: [a, b]}\n",
            ["suites.s.checks[1]"],
        ),
        # A gate with an unknown key and an out-of-range value.
        (
            "checks:\n  a: {type: length, max_chars: 3}\n"
            "suites:\n  s: {checks: [a], gate: {min_pass_rat: 1, max_error_rate: 2}}\n",
            ["suites.s.gate.min_pass_rat", "suites.s.gate.max_error_rate"],
        ),
        # An unknown target.
        (
            "checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  s: {target: http}\n",
            ["suites.s.target"],
        ),
        # A dataset the suite does not define.
        (
            "checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  s: {dataset: nope}\n",
            ["suites.s.dataset"],
        ),
        # A bad setting.
        (
            "checks: {}\nsettings: {budget: -1, concurrency: 0}\n",
            ["settings.budget", "settings.concurrency"],
        ),
        # Asking the judges again is true or false, not a word that reads like one.
        ("checks: {}\nsettings: {fresh_judges: 'yes'}\n", ["settings.fresh_judges"]),
        # A bad modifier inside a check.
        (
            "checks:\n  a: {type: length, max_chars: 3, when: {type: nope}}\n",
            ["checks.a.when.type"],
        ),
        # A regex flag name Python does not have (flags by name, issue 14).
        (
            "checks:\n  r: {type: regex, pattern: x, flags: [IGNORECASE, CASELESS]}\n",
            ["checks.r.flags[1]"],
        ),
        # A bad example kind.
        (
            "checks:\n  a: {type: length, max_chars: 3, examples: [{text: x, kind: maybe}]}\n",
            ["checks.a.examples[0].kind"],
        ),
    ],
)
def test_load_errors_carry_field_paths(doc: str, expected: list[str]) -> None:
    assert sorted(fields(doc)) == sorted(expected)


def test_regex_flags_by_name_load_from_yaml() -> None:
    # `flags: [IGNORECASE, MULTILINE]` is the YAML spelling of re.I | re.M.
    suite = load_suite_text(
        "checks:\n  r: {type: regex, pattern: '^ok\\b', flags: [IGNORECASE, MULTILINE]}\n"
    )
    compiled = suite.checks["r"]
    run = [Output("first line\nOK then"), Output("first line\nOKAY")]
    got = [run_check_sync(compiled, Sample("s"), o, EMPTY_CONTEXT).passed for o in run]
    assert got == [True, False]


def test_every_problem_is_reported_at_once() -> None:
    # Two broken checks give two violations, not just the first.
    got = fields("checks:\n  a: {type: length, max_wrds: 1}\n  b: {type: nope}\n")
    assert got == ["checks.a.max_wrds", "checks.b.type"]


def test_yaml_syntax_error_names_line_and_column() -> None:
    # Broken YAML is a load error with a position, not an exception.
    with pytest.raises(SpecError) as err:
        load_suite_text("checks:\n  a: {type: length\n")
    assert "line" in str(err.value)


def test_an_escape_beyond_unicode_is_a_load_error() -> None:
    # PyYAML raises a bare ValueError for "\U00110000" (found by the fuzz test): bad YAML
    with pytest.raises(SpecError) as err:
        load_suite_text('checks:\n  "\\U00110000": {type: json_valid}\n')
    assert "invalid YAML" in str(err.value)


def test_not_a_mapping() -> None:
    # A list at the top is not a suite.
    with pytest.raises(SpecError):
        load_suite_text("- a\n- b\n")


async def test_dataset_suite_and_gate_run_end_to_end(tmp_path: Path) -> None:
    # A JSONL dataset of recorded outputs is scored and gated.
    rows = [
        {"id": "a", "input": "q", "expected": "Paris", "output": "Paris"},
        {"id": "b", "input": "q", "expected": "Paris", "output": {"text": "Rome"}},
    ]
    (tmp_path / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    (tmp_path / "suite.yaml").write_text(
        textwrap.dedent(
            """
            checks:
              same: {type: exact}
            datasets:
              qa: {path: qa.jsonl}
            suites:
              smoke:
                dataset: qa
                target: recorded
                checks: [same]
                gate: {min_pass_rate: 0.75}
            """
        )
    )
    suite = load_suite_file(tmp_path / "suite.yaml").select("smoke")
    assert suite.cases is not None and len(suite.cases) == 2
    builder = SummaryBuilder(suite.plan.names, [c.type for c in suite.plan.checks])
    async for r in run_cases(suite.plan, suite.cases, EMPTY_CONTEXT):
        builder.add(r)
    summary = builder.finish(suite.gate)
    assert summary.cases_passed == 1 and not summary.gate_passed


def test_dataset_row_without_output_is_a_load_error(tmp_path: Path) -> None:
    # A recorded target needs an output in every row; the row is named.
    (tmp_path / "d.jsonl").write_text('{"id": "a", "output": "x"}\n{"id": "b"}\n')
    (tmp_path / "s.yaml").write_text("checks: {}\ndatasets:\n  d: d.jsonl\n")
    with pytest.raises(SpecError) as err:
        load_suite_file(tmp_path / "s.yaml")
    assert err.value.violations[0].field == "datasets.d[1].output"


def test_select_requires_a_name_when_several_suites() -> None:
    # Ambiguity is an error naming the choices.
    doc = "checks:\n  a: {type: length, max_chars: 3}\nsuites:\n  x: {}\n  y: {}\n"
    with pytest.raises(SpecError) as err:
        load_suite_text(doc).select()
    assert "x, y" in str(err.value)


def test_custom_checks_register_replace_and_refuse_duplicates(tmp_path: Path, monkeypatch) -> None:
    # Re-importing a module replaces its checks; another function under the key is refused.
    mod = tmp_path / "sw_custom_mod.py"
    mod.write_text(
        "from scorewire.engine.custom import check\n"
        "@check('sw_test.no_apology')\n"
        "def no_apology(sample, output):\n"
        "    return 'sorry' not in output.text.lower()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        load_imports(["sw_custom_mod"])
        first = REGISTRY.get("sw_test.no_apology")
        load_imports(["sw_custom_mod"])  # re-import: replaced, no error
        assert REGISTRY.get("sw_test.no_apology") is not first
        with pytest.raises(DuplicateCheckError):

            @check("sw_test.no_apology")
            def other(sample, output):
                return True

        with pytest.raises(DuplicateCheckError):

            @check("contains")
            def shadow(sample, output):
                return True

    finally:
        REGISTRY.remove("sw_test.no_apology")
        sys.modules.pop("sw_custom_mod", None)


def test_imports_that_fail_are_load_errors() -> None:
    # A module that cannot be imported is reported at its imports[i] path.
    with pytest.raises(SpecError) as err:
        load_suite_text("imports: [surely_not_a_module_xyz]\nchecks: {}\n")
    assert err.value.violations[0].field == "imports[0]"
