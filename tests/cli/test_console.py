"""`scorewire run`'s console as promptfoo users expect it, through the real command: the
failing cases with their reasons, one row per assertion, the prompt × provider matrix,
--filter, --repeat, --no-cache, --max-concurrency, CSV output, `scorewire init`; output
that is not a terminal is not wrapped, and a real terminal (tmux) shows it all."""

from __future__ import annotations

import csv
import json
import shlex
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import cli_command, cli_env, run_cli
from tests.cli.test_run import ECHO_SUITE, _judge_and_answer, failing, write
from tests.fakes.openai_server import FakeOpenAI
from tests.support.wait import wait_until

MATRIX_SUITE = {
    "description": "matrix",
    "prompts": ["Answer: {{query}}", "Briefly: {{query}}"],
    "providers": ["echo", "echo:second"],
    "tests": [
        {
            "description": "capital of France",
            "vars": {"query": "Capital of France?"},
            "assert": [
                {"type": "contains", "value": "France"},
                {"type": "contains", "value": "Capital"},
                {"type": "starts_with", "value": "Answer"},
            ],
        },
        {
            "description": "greeting",
            "vars": {"query": "hi"},
            "assert": [{"type": "contains", "value": "hi"}],
        },
    ],
}


def table_rows(stdout: str, title: str = "scorewire:") -> list[list[str]]:
    """The cells of the rows of the table under `title`."""
    part = stdout.split(title, 1)[1]
    rows = []
    for line in part.splitlines()[1:]:
        if line.startswith("└"):
            break
        if line.startswith("│"):
            rows.append([c.strip() for c in line.strip("│").split("│")])
    return rows


def test_failing_cases_are_listed_with_each_failing_checks_reason(tmp_path: Path) -> None:
    done = run_cli("run", str(write(tmp_path, "s.yaml", failing(ECHO_SUITE))))
    assert done.code == 1
    out = done.stdout
    assert "failures: 1 cases" in out
    # which case (sample id and test description), its output, and the reason
    assert "✗ t0/p1/echo 'capital'" in out
    assert "output: Briefly: Capital of France?" in out
    assert "starts_with: FAIL (0): " in out
    # passing checks of that case are not listed as failures
    failure_part = out.split("failures:", 1)[1].split("cases:", 1)[0]
    assert "contains:" not in failure_part


def test_show_failures_limits_the_list(tmp_path: Path) -> None:
    suite = str(write(tmp_path, "s.yaml", MATRIX_SUITE))
    # prompt 1 fails starts_with for both providers: 2 failing cases
    one = run_cli("run", suite, "--show-failures", "1")
    assert "failures: 2 cases (the first 1; --show-failures N for more)" in one.stdout
    assert one.stdout.count("✗ ") == 1
    none = run_cli("run", suite, "--show-failures", "0")
    assert "failures:" not in none.stdout and none.code == 1
    assert run_cli("run", suite, "--show-failures", "-1").code == 2


def test_one_row_per_assertion_not_per_type(tmp_path: Path) -> None:
    # two `contains` of one test are two rows, and the other test's `contains` a third
    done = run_cli("run", str(write(tmp_path, "s.yaml", MATRIX_SUITE)))
    rows = table_rows(done.stdout)
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("0 capital of France", "contains", "France"),
        ("0 capital of France", "contains", "Capital"),
        ("0 capital of France", "starts_with", "Answer"),
        ("1 greeting", "contains", "hi"),
    ]
    starts_with = rows[2]
    assert starts_with[3:7] == ["50.0%", "2", "2", "0"]  # pass rate, passed, failed, errors


def test_the_prompt_by_provider_matrix(tmp_path: Path) -> None:
    done = run_cli("run", str(write(tmp_path, "s.yaml", MATRIX_SUITE)))
    header = done.stdout.split("prompt × provider", 1)[1].splitlines()[2]
    assert [c.strip() for c in header.strip("┃").split("┃")] == ["prompt", "echo", "echo:second"]
    rows = table_rows(done.stdout, "prompt × provider")
    assert rows == [
        ["p0 Answer: {{query}}", "2/2 (100%)", "2/2 (100%)"],
        ["p1 Briefly: {{query}}", "1/2 (50%)", "1/2 (50%)"],
    ]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("greet", ["t1/p0/echo", "t1/p1/echo"]),  # a description substring
        ("0", ["t0/p0/echo", "t0/p1/echo"]),  # an index
        ("0,1", ["t0/p0/echo", "t0/p1/echo", "t1/p0/echo", "t1/p1/echo"]),  # a list
    ],
)
def test_filter_by_description_or_index(tmp_path: Path, text: str, ids: list[str]) -> None:
    doc = {**MATRIX_SUITE, "providers": ["echo"]}
    out = tmp_path / "r.json"
    done = run_cli(
        "run", str(write(tmp_path, "s.yaml", doc)), "--filter", text, "--output", str(out)
    )
    assert done.code in (0, 1), done.stderr
    assert [r["sample_id"] for r in json.loads(out.read_text())["results"]] == ids


def test_filter_matching_nothing_exits_2(tmp_path: Path) -> None:
    done = run_cli("run", str(write(tmp_path, "s.yaml", MATRIX_SUITE)), "--filter", "nothing")
    assert done.code == 2 and "matches no test" in done.stderr


def test_repeat_runs_every_case_n_times(tmp_path: Path) -> None:
    doc = {**ECHO_SUITE, "providers": ["echo"], "prompts": ECHO_SUITE["prompts"][:1]}
    out = tmp_path / "r.json"
    done = run_cli(
        "run", str(write(tmp_path, "s.yaml", doc)), "--repeat", "3", "--output", str(out)
    )
    assert done.code == 0, done.stderr
    ids = [r["sample_id"] for r in json.loads(out.read_text())["results"]]
    assert ids == [f"t{t}/p0/echo{r}" for t in (0, 1) for r in ("", "#2", "#3")]
    assert "cases: 6/6 passed" in done.stdout
    assert "caches off" in done.stdout
    assert run_cli("run", str(tmp_path / "s.yaml"), "--repeat", "0").code == 2


JUDGED_TWICE = {
    "judge": {"backend": "openai", "model": "gpt-4o-mini"},
    "settings": {"parallel": False},
    "tests": [
        {"output": "Happy to help!", "assert": [{"type": "sentiment"}]},
        {"output": "Happy to help!", "assert": [{"type": "sentiment"}]},
    ],
}


def test_no_cache_makes_every_judge_call(tmp_path: Path) -> None:
    # the same question twice: one call with the cache (tests/cli/test_run.py), two without
    fake = FakeOpenAI(api_key="sk-fake")
    fake.responder = _judge_and_answer
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp_path, "s.yaml", JUDGED_TWICE)),
            "--no-cache",
            SCOREWIRE_OPENAI_API_KEY="sk-fake",
            SCOREWIRE_OPENAI_BASE_URL=fake.url,
        )
        assert fake.calls == 2
    assert done.code == 0, done.stderr
    assert "0 cached verdicts" in done.stdout


def test_max_concurrency(tmp_path: Path) -> None:
    suite = str(write(tmp_path, "s.yaml", MATRIX_SUITE))
    assert run_cli("run", suite, "--max-concurrency", "0").code == 2
    done = run_cli("run", suite, "--max-concurrency", "1")
    assert done.code == 1 and "cases: 6/8 passed" in done.stdout


def test_csv_output_has_a_row_per_score(tmp_path: Path) -> None:
    out = tmp_path / "results.csv"
    done = run_cli("run", str(write(tmp_path, "s.yaml", failing(ECHO_SUITE))), "--output", str(out))
    assert done.code == 1
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    # test 0: 2 prompts × 3 assertions; test 1: 2 prompts × 1 assertion
    assert len(rows) == 8
    failed = [r for r in rows if r["passed"] == "False"]
    assert [(r["sample_id"], r["check"], r["prompt_index"]) for r in failed] == [
        ("t0/p1/echo", "starts_with", "1")
    ]
    assert failed[0]["reason"] and failed[0]["description"] == "capital"
    assert rows[0]["output"] == "Answer: Capital of France?"
    assert [r["test"] for r in rows] == ["0"] * 6 + ["1"] * 2
    assert {r["provider"] for r in rows} == {"echo"}


def test_csv_output_escapes_cells_a_spreadsheet_would_run(tmp_path: Path) -> None:
    # an output is whatever a model wrote: "=HYPERLINK(...)" must reach the sheet as text
    doc = {
        "tests": [
            {"output": '=HYPERLINK("http://x.invalid","click")', "assert": [{"type": "is_json"}]},
            {"description": "+sum", "output": "plain", "assert": [{"type": "is_json"}]},
        ]
    }
    out = tmp_path / "results.csv"
    done = run_cli("run", str(write(tmp_path, "s.yaml", doc)), "--output", str(out))
    assert done.code == 1, done.stderr
    with out.open(newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert rows[0]["output"] == '\'=HYPERLINK("http://x.invalid","click")'
    assert rows[1]["description"] == "'+sum" and rows[1]["output"] == "plain"
    assert [r["passed"] for r in rows] == ["False", "False"]


def test_init_scaffolds_a_suite_that_validates_and_runs(tmp_path: Path) -> None:
    done = run_cli("init", cwd=tmp_path)
    assert done.code == 0, done.stderr
    suite = tmp_path / "eval.yaml"
    text = suite.read_text()
    assert run_cli("validate", str(suite)).code == 0
    ran = run_cli("run", str(suite))
    assert ran.code == 0, ran.stdout + ran.stderr
    assert "gate: PASSED" in ran.stdout
    # it never overwrites, also given the directory
    for args in ((), (str(tmp_path),)):
        again = run_cli("init", *args, cwd=tmp_path)
        assert again.code == 2 and "already exists" in again.stderr
    assert suite.read_text() == text
    other = run_cli("init", str(tmp_path / "other.yaml"))
    assert other.code == 0 and (tmp_path / "other.yaml").exists()


def test_output_that_is_not_a_terminal_is_not_wrapped(tmp_path: Path) -> None:
    # a long description and a long needle stay on one line each (no 80-column wrap)
    long_description = "a test whose description is long " * 6
    needle = "a needle never there " * 2
    doc = {
        "tests": [
            {
                "description": long_description.strip(),
                "output": "short",
                "assert": [{"type": "contains", "value": needle.strip()}],
            }
        ]
    }
    done = run_cli("run", str(write(tmp_path, "s.yaml", doc)), COLUMNS="80")
    assert done.code == 1
    lines = done.stdout.splitlines()
    assert any(long_description.strip() in ln for ln in lines)
    assert any(needle.strip() in ln and ln.startswith("│") for ln in lines)
    assert max(len(ln) for ln in lines) > 200


def test_server_mode_shows_failures_and_the_matrix(tmp_path: Path, server_addr: str) -> None:
    done = run_cli("run", str(write(tmp_path, "s.yaml", MATRIX_SUITE)), "--server", server_addr)
    assert done.code == 1, done.stderr
    assert "failures: 2 cases" in done.stdout
    assert "starts_with: FAIL" in done.stdout
    rows = table_rows(done.stdout, "prompt × provider")
    assert rows[1] == ["p1 Briefly: {{query}}", "1/2 (50%)", "1/2 (50%)"]


def _tmux(*args: str, socket: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=30, check=False
    )


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_console_in_a_real_terminal(tmp_path: Path) -> None:
    # a 120×40 terminal: the progress bar, the per-assertion table, the matrix and the
    # failures, every line within the terminal's width
    suite = write(tmp_path, "s.yaml", MATRIX_SUITE)
    env: dict[str, Any] = cli_env(TERM="xterm-256color")
    script = tmp_path / "run.sh"
    exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
    command = shlex.join(cli_command("run", str(suite)))
    # The tmux server passes on its own environment's COLUMNS/LINES, which would hide the
    # pane's real size from the program.
    script.write_text(f'{exports}unset COLUMNS LINES\n{command}\necho "EXIT=$?"\nsleep 600\n')
    socket = f"scorewire-test-{uuid.uuid4().hex[:8]}"
    started = _tmux(
        "new-session", "-d", "-s", "run", "-x", "120", "-y", "40", f"bash {script}", socket=socket
    )
    assert started.returncode == 0, started.stderr
    try:

        def screen() -> str:
            return _tmux("capture-pane", "-p", "-S", "-", "-t", "run", socket=socket).stdout

        wait_until(lambda: "EXIT=" in screen(), "the run finished in the terminal", timeout_s=90)
        text = screen()
    finally:
        _tmux("kill-server", socket=socket)
    assert "EXIT=1" in text
    lines = text.splitlines()
    assert max(len(ln) for ln in lines) <= 120
    assert any(ln.startswith("scoring") and "8/8" in ln for ln in lines)  # the progress bar
    rows = table_rows(text)
    assert [r[1] for r in rows] == ["contains", "contains", "starts_with", "contains"]
    assert table_rows(text, "prompt × provider")[1][1:] == ["1/2 (50%)", "1/2 (50%)"]
    assert "✗ t0/p1/echo 'capital of France'" in text
    assert "gate: FAILED" in text


def test_filter_picks_evalstone_cases_by_id_or_index(tmp_path: Path) -> None:
    from tests.cli.test_run import evalstone

    suite = str(evalstone(tmp_path))
    for text, ids in (("b", ["b"]), ("0", ["a"]), ("0-1", ["a", "b"])):
        out = tmp_path / "r.json"
        done = run_cli("run", suite, "--suite", "smoke", "--filter", text, "--output", str(out))
        assert done.code in (0, 1), done.stderr
        assert [r["sample_id"] for r in json.loads(out.read_text())["results"]] == ids
    nothing = run_cli("run", suite, "--suite", "smoke", "--filter", "zzz")
    assert nothing.code == 2 and "matches no case" in nothing.stderr


def test_html_output_is_the_report_not_json(tmp_path: Path) -> None:
    # `--output r.html` used to write the results JSON under an .html name.
    out = tmp_path / "report.html"
    done = run_cli("run", str(write(tmp_path, "s.yaml", failing(ECHO_SUITE))), "--output", str(out))
    assert done.code == 1
    html = out.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert "t0/p1/echo" in html and "starts_with" in html
