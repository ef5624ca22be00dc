"""`scorewire run`, `validate` and `checks` as subprocesses: exit codes, progress, files,
--server mode against a real server, and Ctrl-C."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any, cast

import jsonschema
import pytest
import yaml

from tests.cli.conftest import ROOT, cli_command, cli_env, run_cli, wait_for_line
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.redis import RedisServer
from tests.support.wait import wait_until

RESULTS_SCHEMA = json.loads((ROOT / "schemas" / "results.schema.json").read_text())

ECHO_SUITE = {
    "description": "echo smoke",
    "prompts": ["Answer: {{query}}", "Briefly: {{query}}"],
    "providers": ["echo"],
    "tests": [
        {
            "description": "capital",
            "vars": {"query": "Capital of France?"},
            "assert": [
                {"type": "contains", "value": "France"},
                {"type": "max_tokens", "value": 50},
            ],
        },
        {
            "vars": {"query": "hi"},
            "output": '{"greeting": "hello"}',
            "assert": [{"type": "is_json"}],
        },
    ],
}


def write(tmp: Path, name: str, doc: Any) -> Path:
    path = tmp / name
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    path.write_text(textwrap.dedent(text))
    return path


def failing(doc: dict[str, Any]) -> dict[str, Any]:
    """The echo suite with an assertion the second prompt fails."""
    out = json.loads(json.dumps(doc))
    out["tests"][0]["assert"].append({"type": "starts_with", "value": "Answer"})
    return out


EVALSTONE = """
checks:
  same: {type: exact}
  short: {type: length, max_chars: 100}
datasets:
  qa: {path: qa.jsonl}
suites:
  smoke:
    dataset: qa
    checks: [same, short]
    gate: {min_pass_rate: 0.5}
  strict:
    dataset: qa
    checks: [same]
    gate: {min_pass_rate: 1.0}
"""

ROWS = [
    {"id": "a", "input": "capital of France", "expected": "Paris", "output": "Paris"},
    {"id": "b", "input": "capital of Italy", "expected": "Rome", "output": "Milan"},
]


def evalstone(tmp: Path) -> Path:
    (tmp / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    return write(tmp, "evalstone.yaml", EVALSTONE)


# ---- exit codes ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "args", "code", "says"),
    [
        # every assertion of every combination passes: the default gate passes
        (lambda t: write(t, "s.yaml", ECHO_SUITE), [], 0, "gate: PASSED"),
        # one combination fails an assertion: the gate fails
        (lambda t: write(t, "s.yaml", failing(ECHO_SUITE)), [], 1, "gate: FAILED"),
        # an evalstone suite whose gate allows the failure
        (evalstone, ["--suite", "smoke"], 0, "gate: PASSED"),
        # the same dataset under a stricter gate
        (evalstone, ["--suite", "strict"], 1, "pass rate 0.5 is below min_pass_rate 1"),
        # --budget overrides the file's budget and is shown
        (lambda t: write(t, "s.yaml", ECHO_SUITE), ["--budget", "0.5"], 0, "$0.5000 budget"),
    ],
)
def test_exit_code_follows_the_gate(
    tmp_path: Path, make: Any, args: list[str], code: int, says: str
) -> None:
    done = run_cli("run", str(make(tmp_path)), *args)
    assert done.code == code, done.stderr
    assert says in done.stdout


@pytest.mark.parametrize(
    ("doc", "args", "says"),
    [
        # a bad suite: every problem with its path
        (
            {"tests": [{"output": "x", "assert": [{"type": "contains", "value": 1}]}]},
            [],
            "tests[0].assert[0].value",
        ),
        # broken YAML names the line
        ("tests: [\n", [], "line"),
        # a negative budget
        (ECHO_SUITE, ["--budget", "-1"], "--budget"),
        # --suite on a checkllm file
        (ECHO_SUITE, ["--suite", "x"], "checkllm file is one suite"),
        # an unknown option (argparse)
        (ECHO_SUITE, ["--nope"], "unrecognized arguments"),
        # a provider with no credentials cannot start
        (
            {
                "prompts": ["{{q}}"],
                "providers": ["openai:gpt-4o-mini"],
                "tests": [{"vars": {"q": 1}}],
            },
            [],
            "SCOREWIRE_OPENAI_API_KEY",
        ),
    ],
)
def test_bad_suite_or_arguments_exit_2(
    tmp_path: Path, doc: Any, args: list[str], says: str
) -> None:
    done = run_cli("run", str(write(tmp_path, "s.yaml", doc)), *args)
    assert done.code == 2
    assert says in done.stderr


def test_missing_file_exits_2(tmp_path: Path) -> None:
    # a path that does not exist is a bad argument
    done = run_cli("run", str(tmp_path / "nope.yaml"))
    assert done.code == 2 and "cannot read" in done.stderr


def test_evalstone_suite_must_be_named_when_there_are_several(tmp_path: Path) -> None:
    # two suites and no --suite: exit 2 naming them
    done = run_cli("run", str(evalstone(tmp_path)))
    assert done.code == 2 and "smoke, strict" in done.stderr


# ---- progress and summary -------------------------------------------------------------------


def test_progress_is_plain_lines_without_a_terminal(tmp_path: Path) -> None:
    # stderr is not a terminal: one line per tenth, no control characters
    done = run_cli("run", str(write(tmp_path, "s.yaml", failing(ECHO_SUITE))))
    lines = [ln for ln in done.stderr.splitlines() if ln.startswith("scorewire: scoring")]
    assert lines[0] == "scorewire: scoring 4 cases"
    assert lines[-1] == "scorewire: scoring 4/4 (3 passed, 1 failed, 0 errored)"
    assert "\x1b" not in done.stderr


def test_summary_table_shows_pass_rate_per_check_errors_cost_and_cache(tmp_path: Path) -> None:
    # one row per assertion (test, then check) in plan order, then totals
    done = run_cli("run", str(write(tmp_path, "s.yaml", failing(ECHO_SUITE))))
    table = done.stdout.split("prompt × provider")[0]
    rows = [ln for ln in table.splitlines() if ln.startswith("│")]
    assert [r.split("│")[1].strip() for r in rows] == ["0 capital"] * 3 + ["1"]
    names = [r.split("│")[2].strip() for r in rows]
    assert names == ["contains", "max_tokens", "starts_with", "is_json"]
    starts_with = [cell.strip() for cell in rows[2].split("│")]
    assert "50.0%" in starts_with  # its pass rate
    # is_json is checkllm's spelling of json_valid: a type column shows the canonical type
    assert "json_valid" in rows[3]
    for label in ("cases: 3/4 passed", "scores:", "errors", "cost: $", "cache:", "saved"):
        assert label in done.stdout


# ---- files ---------------------------------------------------------------------------------


def run_with_files(tmp: Path, doc: Any, *args: str) -> tuple[Any, dict[str, Any], ET.Element]:
    out, xml = tmp / "results.json", tmp / "results.xml"
    done = run_cli(
        "run", str(write(tmp, "s.yaml", doc)), "--output", str(out), "--junit", str(xml), *args
    )
    return done, json.loads(out.read_text()), ET.parse(xml).getroot()


def test_results_json_matches_its_schema_and_the_labeller_reads_it(tmp_path: Path) -> None:
    done, doc, _ = run_with_files(tmp_path, failing(ECHO_SUITE))
    assert done.code == 1
    jsonschema.validate(doc, RESULTS_SCHEMA)
    assert [r["sample_id"] for r in doc["results"]] == [
        "t0/p0/echo",
        "t0/p1/echo",
        "t1/p0/echo",
        "t1/p1/echo",
    ]
    first = doc["results"][0]
    assert first["output"] == "Answer: Capital of France?" and first["provider"] == "echo"
    assert first["input"] == {"query": "Capital of France?"}
    assert [s["name"] for s in first["scores"]] == ["contains", "max_tokens", "starts_with"]
    assert doc["results"][1]["scores"][2]["passed"] is False
    assert doc["summary"]["gate"] == {
        "passed": False,
        "reasons": ["pass rate 0.75 is below min_pass_rate 1"],
    }
    # `scorewire label` takes the file as it is
    from scorewire.cli.label import load_items

    items = load_items(str(tmp_path / "results.json"))
    assert [i.sample_id for i in items] == [r["sample_id"] for r in doc["results"]]
    assert items[0].scores[0]["name"] == "contains"


def _int(el: ET.Element, attr: str) -> int:
    value = el.get(attr)
    assert value is not None and value.isdigit(), (el.tag, attr, value)
    return int(value)


def assert_valid_junit(root: ET.Element) -> None:
    """The JUnit XML structure CI systems read (the common junit.xsd, as assertions)."""
    assert root.tag == "testsuites"
    total = failures = errors = 0
    for ts in root:
        assert ts.tag == "testsuite" and ts.get("name")
        cases = list(ts)
        assert all(tc.tag == "testcase" for tc in cases)
        assert _int(ts, "tests") == len(cases)
        n_fail = n_err = 0
        for tc in cases:
            assert tc.get("name") and tc.get("classname")
            float(tc.get("time", "x"))
            children = list(tc)
            assert len(children) <= 1 and all(c.tag in ("failure", "error") for c in children)
            for c in children:
                assert c.get("message") is not None and c.get("type")
                n_fail += c.tag == "failure"
                n_err += c.tag == "error"
        assert (_int(ts, "failures"), _int(ts, "errors"), _int(ts, "skipped")) == (n_fail, n_err, 0)
        float(ts.get("time", "x"))
        total, failures, errors = total + len(cases), failures + n_fail, errors + n_err
    assert (_int(root, "tests"), _int(root, "failures"), _int(root, "errors")) == (
        total,
        failures,
        errors,
    )


def test_junit_xml_has_a_suite_per_check_and_a_case_per_sample(tmp_path: Path) -> None:
    _, _, root = run_with_files(tmp_path, failing(ECHO_SUITE))
    assert_valid_junit(root)
    suites = {ts.get("name"): ts for ts in root}
    assert list(suites) == ["contains", "max_tokens", "starts_with", "is_json", "gate"]
    starts = suites["starts_with"]
    failed = [tc.get("name") for tc in starts if tc.find("failure") is not None]
    assert failed == ["capital [t0/p1/echo]"]
    assert starts.find("testcase").get("classname") == "echo smoke.starts_with"
    # the gate is a test case of its own, failing with the gate's reasons
    gate = suites["gate"].find("testcase/failure")
    assert gate is not None and "min_pass_rate" in gate.get("message", "")


def test_junit_cases_carry_their_test_description_and_the_time_they_took(
    tmp_path: Path,
) -> None:
    # A case's time is its output's generation plus its check's scoring, as the results
    # file records them (to the microsecond: deterministic checks take microseconds,
    # which three decimals showed as 0.000); the root's time is the run's wall clock.
    began = time.monotonic()
    _, results, root = run_with_files(tmp_path, failing(ECHO_SUITE))
    took = time.monotonic() - began
    contains = root.find("testsuite[@name='contains']")
    assert contains is not None
    expected = []
    for r in results["results"]:
        if r["group"] != "t0":  # the test with `contains`
            continue
        (score,) = [s for s in r["scores"] if s["name"] == "contains"]
        seconds = (score["latency_ms"] + r["generation"]["latency_ms"]) / 1000
        expected.append((f"{r['description']} [{r['sample_id']}]", seconds))
    shown = [(tc.get("name"), float(tc.get("time", "x"))) for tc in contains]
    # (the results file rounds latencies to the microsecond of a millisecond)
    assert shown == [(name, pytest.approx(t, abs=2e-6)) for name, t in expected]
    assert any(t > 0 for _, t in shown)
    wall = float(root.get("time", "x"))
    assert sum(t for _, t in shown) < wall < took


def test_no_table_prints_the_failures_and_totals_without_the_tables(tmp_path: Path) -> None:
    suite = str(write(tmp_path, "s.yaml", failing(ECHO_SUITE)))
    full, short = run_cli("run", suite), run_cli("run", suite, "--no-table")
    assert full.code == short.code == 1
    assert "prompt × provider" in full.stdout and "starts_with" in full.stdout
    assert "prompt × provider" not in short.stdout
    # what remains is the full report's tail: the failing case, then the totals
    tail = full.stdout[full.stdout.index("failures: ") :]
    assert short.stdout.endswith(tail) and short.stdout.startswith("failures: ")


def test_junit_reports_errors_as_error_elements(tmp_path: Path) -> None:
    # a check that cannot score (no embeddings endpoint) is an <error> with its code
    doc = {"tests": [{"output": "kittens", "assert": [{"type": "similarity", "value": "cats"}]}]}
    done, results, root = run_with_files(tmp_path, doc)
    assert done.code == 1
    assert_valid_junit(root)
    error = root.find("testsuite[@name='similarity']/testcase/error")
    assert error is not None and error.get("type") == "EMBEDDINGS_ERROR"
    jsonschema.validate(results, RESULTS_SCHEMA)
    assert results["results"][0]["scores"][0]["error"]["code"] == "EMBEDDINGS_ERROR"


def test_junit_escapes_what_xml_cannot_carry(tmp_path: Path) -> None:
    # control characters and markup in outputs and reasons still give well-formed XML
    doc = {
        "tests": [
            {"output": 'a\x01b <tag> & "q"', "assert": [{"type": "exact_match", "value": "z"}]}
        ]
    }
    _, _, root = run_with_files(tmp_path, doc)
    assert_valid_junit(root)


# ---- validate and checks ----------------------------------------------------------------------


def test_validate_reports_every_problem_with_its_path(tmp_path: Path) -> None:
    doc = {
        "prompts": ["{{query}}"],
        "providers": ["echo", "nope:x"],
        "tests": [
            {"vars": {"query": "q"}, "assert": [{"type": "regex", "value": "("}]},
            {"vars": {}, "assert": [{"type": "relevance", "threshold": 3}]},
        ],
    }
    done = run_cli("validate", str(write(tmp_path, "s.yaml", doc)))
    assert done.code == 2
    for path in ("providers[1]", "tests[0].assert[0].value", "tests[1].assert[0].threshold"):
        assert path in done.stderr


def test_validate_accepts_a_good_suite(tmp_path: Path) -> None:
    done = run_cli("validate", str(write(tmp_path, "s.yaml", ECHO_SUITE)))
    assert done.code == 0 and "valid checkllm suite" in done.stdout and "4 cases" in done.stdout


def test_checks_prints_the_catalog() -> None:
    # the table lists the format's types; --json carries parameter schemas
    done = run_cli("checks")
    assert done.code == 0
    for name in ("relevance", "context_relevance", "rouge_l", "is_valid_python", "contains"):
        assert name in done.stdout
    catalog = json.loads(run_cli("checks", "--json", "--family", "judge").stdout)
    names = {c["name"] for c in catalog}
    assert {"relevance", "groundedness", "judge"} <= names
    assert all(c["uses_judge"] for c in catalog)
    assert (
        "threshold"
        in next(c for c in catalog if c["name"] == "fluency")["params_schema"]["properties"]
    )


# ---- against a server ------------------------------------------------------------------------


def _outcomes(doc: dict[str, Any]) -> dict[str, list[tuple[str, bool]]]:
    return {r["sample_id"]: [(s["name"], s["passed"]) for s in r["scores"]] for r in doc["results"]}


@pytest.mark.parametrize("kind", ["checkllm", "evalstone"])
def test_server_mode_scores_like_in_process(tmp_path: Path, server_addr: str, kind: str) -> None:
    # the same suite scored here and on a real server gives the same results and exit code
    if kind == "checkllm":
        suite, extra = write(tmp_path, "s.yaml", failing(ECHO_SUITE)), []
    else:
        suite, extra = evalstone(tmp_path), ["--suite", "smoke"]
    local = run_cli("run", str(suite), *extra, "--output", str(tmp_path / "local.json"))
    remote = run_cli(
        "run",
        str(suite),
        *extra,
        "--server",
        server_addr,
        "--output",
        str(tmp_path / "remote.json"),
    )
    assert remote.code == local.code, remote.stderr
    local_doc = json.loads((tmp_path / "local.json").read_text())
    remote_doc = json.loads((tmp_path / "remote.json").read_text())
    jsonschema.validate(remote_doc, RESULTS_SCHEMA)
    assert _outcomes(remote_doc) == _outcomes(local_doc)
    assert f"scored on {server_addr}" in remote.stdout


def test_server_refusal_is_reported_with_paths(tmp_path: Path, server_addr: str) -> None:
    # a custom check the server does not have: exit 2, the path in the file's terms
    (tmp_path / "sw_cli_custom.py").write_text(
        "from scorewire.engine.custom import check\n"
        "@check('sw_cli.always')\n"
        "def always(sample, output):\n"
        "    return True\n"
    )
    (tmp_path / "qa.jsonl").write_text(json.dumps(ROWS[0]) + "\n")
    suite = write(
        tmp_path,
        "s.yaml",
        "imports: [sw_cli_custom]\n"
        "checks:\n  mine: {type: sw_cli.always}\n"
        "datasets:\n  qa: qa.jsonl\n"
        "suites:\n  s: {dataset: qa}\n",
    )
    env = {"PYTHONPATH": cli_env()["PYTHONPATH"] + f":{tmp_path}"}
    assert run_cli("run", str(suite), **env).code == 0
    done = run_cli("run", str(suite), "--server", server_addr, **env)
    assert done.code == 2
    assert "checks.mine.type" in done.stderr and "unknown check type" in done.stderr


def test_unreachable_server_exits_2(tmp_path: Path) -> None:
    # nothing listens there: the run cannot happen
    done = run_cli(
        "run", str(write(tmp_path, "s.yaml", ECHO_SUITE)), "--server", "127.0.0.1:1", timeout=60
    )
    assert done.code == 2 and "server" in done.stderr


# ---- Ctrl-C -----------------------------------------------------------------------------------


def test_ctrl_c_stops_calls_and_writes_what_finished(tmp_path: Path) -> None:
    # two answers come back, the third call hangs; SIGINT ends the run with exit 130, the
    # summary and both files cover the two finished cases
    doc = {
        "prompts": ["{{q}}"],
        "providers": ["openai:gpt-4o-mini"],
        "settings": {"parallel": False},
        "tests": [
            {"vars": {"q": f"question {i}"}, "assert": [{"type": "contains", "value": "question"}]}
            for i in range(5)
        ],
    }
    suite = write(tmp_path, "s.yaml", doc)
    out, xml = tmp_path / "results.json", tmp_path / "results.xml"
    fake = FakeOpenAI(api_key="sk-fake")
    answered = 0

    def respond(body: Any) -> Reply:
        nonlocal answered
        answered += 1
        if answered > 2:
            return Reply(hang=True)
        return Reply(content=f"answer to {body['messages'][-1]['content']}")

    fake.responder = respond
    with fake.running():
        proc = subprocess.Popen(
            cli_command("run", str(suite), "--output", str(out), "--junit", str(xml)),
            cwd=ROOT,
            env=cli_env(SCOREWIRE_OPENAI_API_KEY="sk-fake", SCOREWIRE_OPENAI_BASE_URL=fake.url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            found, lines = wait_for_line(proc, "scoring 2/5")
            assert found, "".join(lines)
            # the third request is in flight (and hangs) before the interrupt
            wait_until(lambda: fake.in_flight, "the third request to be in flight", timeout_s=20)
            proc.send_signal(signal.SIGINT)
            stdout, _ = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 130
    assert "interrupted" in stdout and "cases: 2/2 passed" in stdout
    doc_out = json.loads(out.read_text())
    jsonschema.validate(doc_out, RESULTS_SCHEMA)
    assert doc_out["interrupted"] is True
    assert [r["sample_id"] for r in doc_out["results"]] == [
        "t0/p0/openai:gpt-4o-mini",
        "t1/p0/openai:gpt-4o-mini",
    ]
    assert doc_out["summary"]["planned_cases"] == 5
    root = ET.parse(xml).getroot()
    assert_valid_junit(root)
    assert "interrupted" in root.find("testsuite[@name='gate']/testcase/failure").get("message")


def test_format_types_work_over_grpc_and_are_listed(server_addr: str) -> None:
    # ListChecks lists the judge assertion types; a request naming one compiles, and
    # (deliberately changed by the preflight) a server with no judge refuses it up front
    # with FAILED_PRECONDITION naming the check, rather than scoring JUDGE_ERRORs
    from scorewire.client import Client, ScorewireError

    with Client(server_addr) as client:
        listed = {c.type: c for c in client.list_checks().checks}
        for name in ("relevance", "groundedness", "rouge_l", "not_contains"):
            assert name in listed
        assert listed["relevance"].uses_judge
        with pytest.raises(ScorewireError) as caught:
            client.score(
                "Bring it back within 30 days.",
                sample={"input": {"query": "How do I return it?"}},
                checks=[
                    {"type": "relevance", "params": {"threshold": 0.5}},
                    {"type": "not_contains", "params": {"value": "never"}},
                ],
            )
        assert caught.value.code.name == "FAILED_PRECONDITION"
        assert [v.field for v in caught.value.field_violations] == ["checks[0]"]
        resp = client.score(
            "Bring it back within 30 days.",
            checks=[{"type": "not_contains", "params": {"value": "never"}}],
        )
    (not_contains,) = resp.scores
    assert not_contains.passed


def _judge_and_answer(body: Any) -> Reply:
    """The stand-in as both provider (plain chat) and judge (asks for JSON)."""
    if "response_format" in body:
        return Reply(content=json.dumps({"reasoning": "fine", "score": 5}))
    return Reply(content=f"[{body['model']}] {body['messages'][-1]['content']}")


def test_judge_costs_and_cache_savings_in_the_summary(tmp_path: Path) -> None:
    # two tests ask the judge the same question: one call, one cached verdict, money saved
    doc = {
        "judge": {"backend": "openai", "model": "gpt-4o-mini"},
        "settings": {"parallel": False},
        "tests": [
            {"output": "Happy to help!", "assert": [{"type": "sentiment"}]},
            {"output": "Happy to help!", "assert": [{"type": "sentiment"}]},
        ],
    }
    fake = FakeOpenAI(api_key="sk-fake")
    fake.responder = _judge_and_answer
    out = tmp_path / "r.json"
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp_path, "s.yaml", doc)),
            "--output",
            str(out),
            SCOREWIRE_OPENAI_API_KEY="sk-fake",
            SCOREWIRE_OPENAI_BASE_URL=fake.url,
        )
        assert fake.calls == 1
    assert done.code == 0, done.stderr
    summary = json.loads(out.read_text())["summary"]
    assert summary["judge_cost_usd"] > 0 and summary["cached_scores"] == 1
    assert summary["saved_usd"] > 0
    assert "1 cached verdicts" in done.stdout


def test_gemini_provider_and_judge_use_its_openai_compatible_endpoint(tmp_path: Path) -> None:
    # `gemini:<model>` generates and `judge: {backend: gemini}` grades, both at the
    # configured Gemini base URL with the Gemini key
    doc = {
        "judge": {"backend": "gemini", "model": "gemini-judge"},
        "prompts": ["Say hi to {{name}}"],
        "providers": ["gemini:gemini-writer"],
        "tests": [
            {
                "vars": {"name": "Ada"},
                "assert": [{"type": "contains", "value": "Ada"}, {"type": "fluency"}],
            }
        ],
    }
    fake = FakeOpenAI(api_key="gm-key")
    fake.responder = _judge_and_answer
    out = tmp_path / "r.json"
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp_path, "s.yaml", doc)),
            "--output",
            str(out),
            GEMINI_API_KEY="gm-key",
            SCOREWIRE_GEMINI_BASE_URL=fake.url,
            # the made-up models have no price, and a checkllm run has a budget ($10 by
            # default): they must be priced (here: free) or the calls are refused
            SCOREWIRE_JUDGE_PRICES='{"gemini-writer": [0, 0], "gemini-judge": [0, 0]}',
        )
        models = [r.body["model"] for r in fake.requests]
    assert done.code == 0, done.stderr
    assert models == ["gemini-writer", "gemini-judge"]
    (result,) = json.loads(out.read_text())["results"]
    assert result["output"] == "[gemini-writer] Say hi to Ada"
    assert result["provider"] == "gemini:gemini-writer"


def test_server_mode_over_mutual_tls_with_a_token(tmp_path: Path, pki: dict[str, Any]) -> None:
    # --tls-ca/--tls-cert/--tls-key and SCOREWIRE_TOKEN reach a locked-down server; without
    # the token the server refuses and the run cannot happen (exit 2).
    import hashlib

    token = "cli-token-0123456789"
    env = cli_env(
        SCOREWIRE_TLS_CERT=str(pki["srv_cert_path"]),
        SCOREWIRE_TLS_KEY=str(pki["srv_key_path"]),
        SCOREWIRE_TLS_CLIENT_CA=str(pki["ca_path"]),
        SCOREWIRE_AUTH_TOKEN_SHA256=hashlib.sha256(token.encode()).hexdigest(),
        SCOREWIRE_METRICS_ENABLED="false",
        SCOREWIRE_LABELS_PATH=str(tmp_path / "labels.db"),
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "scorewire.cli.main", "serve", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        port = line.rsplit(":", 1)[1].strip()
        suite = write(tmp_path, "s.yaml", ECHO_SUITE)
        tls = [
            "--tls-ca",
            str(pki["ca_path"]),
            "--tls-cert",
            str(pki["cli_cert_path"]),
            "--tls-key",
            str(pki["cli_key_path"]),
        ]
        ok = run_cli(
            "run", str(suite), "--server", f"localhost:{port}", *tls, SCOREWIRE_TOKEN=token
        )
        local = run_cli("run", str(suite))
        assert ok.code == local.code, ok.stderr
        assert f"scored on localhost:{port}" in ok.stdout
        refused = run_cli(
            "run", str(suite), "--server", f"localhost:{port}", *tls, SCOREWIRE_TOKEN="wrong"
        )
        assert refused.code == 2 and token not in refused.stderr
    finally:
        proc.terminate()
        proc.wait(15)


def test_the_check_timeout_setting_bounds_local_checks(tmp_path: Path) -> None:
    # SCOREWIRE_CHECK_TIMEOUT_S is the per-check timeout of local runs too (it was ignored:
    # a hanging check ran for the built-in 120 s).
    doc = {
        "imports": ["tests.server.custom_checks"],
        "checks": {"slow": {"type": "test.slow"}},
        "datasets": {"d": {"cases": [{"id": "a", "output": "x", "metadata": {"sleep": 60}}]}},
        "suites": {"s": {"dataset": "d", "checks": ["slow"]}},
    }
    out = tmp_path / "results.json"
    done = run_cli(
        "run",
        str(write(tmp_path, "s.yaml", doc)),
        "--output",
        str(out),
        timeout=50,
        SCOREWIRE_CHECK_TIMEOUT_S="0.3",
    )
    assert done.code == 1, done.stderr
    assert '"TIMEOUT"' in out.read_text()


def test_fresh_judges_asks_the_judges_again_past_a_shared_cache(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    # A Redis cache outlives each run: the second plain run reads the first run's verdict;
    # --fresh-judges asks again (one call) and leaves its verdict for the next plain run.
    doc = {
        "judge": {"backend": "openai", "model": "gpt-4o-mini"},
        "tests": [{"output": "Happy to help!", "assert": [{"type": "sentiment"}]}],
    }
    suite = str(write(tmp_path, "s.yaml", doc))
    fake = FakeOpenAI(api_key="sk-fake")
    fake.responder = _judge_and_answer
    env = {
        "SCOREWIRE_OPENAI_API_KEY": "sk-fake",
        "SCOREWIRE_CACHE_URL": redis_server.url,
    }

    def run(*flags: str) -> dict[str, Any]:
        out = tmp_path / "r.json"
        done = run_cli("run", suite, "--output", str(out), *flags, **env)
        assert done.code == 0, done.stderr
        if flags:
            assert "judges asked again" in done.stdout
        return cast(dict[str, Any], json.loads(out.read_text())["summary"])

    with fake.running():
        env["SCOREWIRE_OPENAI_BASE_URL"] = fake.url
        first, plain = run(), run()
        fresh = run("--fresh-judges")
        after = run()
    assert (first["cached_scores"], plain["cached_scores"]) == (0, 1)
    assert fresh["cached_scores"] == 0 and fresh["judge_cost_usd"] > 0
    assert after["cached_scores"] == 1 and fake.calls == 2
