"""Preflight in the CLI: `scorewire run` and `validate` refuse, before any call, a suite
whose judges or providers have no backend, credentials or price here (exit 2, naming the
field and the setting); `validate --offline` skips the credential part."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import run_cli
from tests.cli.test_run import write
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI

GEMINI_JUDGE = {
    "description": "gemini judge",
    "judge": {"backend": "gemini", "model": "gemini-2.5-flash"},
    "tests": [
        {
            "vars": {"query": "How do I return an item?"},
            "output": "You can return it within 30 days.",
            "assert": [{"type": "relevance"}, {"type": "contains", "value": "return"}],
        }
    ],
}


def test_a_gemini_judge_without_a_key_stops_before_any_call(tmp_path: Path) -> None:
    # the reported bug: it used to retry five times per check against Google's endpoint
    # and then blame "openai"; now it exits 2 at once naming judge.backend and the key.
    # OpenAI credentials are present (pointing at a stand-in) and must not be borrowed.
    fake = FakeOpenAI(api_key="sk-openai")
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp_path, "s.yaml", GEMINI_JUDGE)),
            SCOREWIRE_OPENAI_API_KEY="sk-openai",
            SCOREWIRE_OPENAI_BASE_URL=fake.url,
        )
        assert fake.calls == 0
    assert done.code == 2, done.stdout
    assert "cannot run here" in done.stderr
    assert "judge.backend: the gemini judge backend is not configured" in done.stderr
    assert "SCOREWIRE_GEMINI_API_KEY" in done.stderr
    assert "openai" not in done.stderr.lower()
    assert done.stdout == ""  # nothing ran, so no summary


def test_validate_reports_it_and_offline_skips_credentials(tmp_path: Path) -> None:
    suite = str(write(tmp_path, "s.yaml", GEMINI_JUDGE))
    done = run_cli("validate", suite)
    assert done.code == 2
    assert "valid, but cannot run here" in done.stderr
    assert "SCOREWIRE_GEMINI_API_KEY" in done.stderr
    offline = run_cli("validate", "--offline", suite)
    assert offline.code == 0, offline.stderr
    assert "credentials not checked" in offline.stdout


@pytest.mark.parametrize(
    ("doc", "field", "setting"),
    [
        # an assertion naming its own judge backend, which has no key
        (
            {
                "tests": [
                    {
                        "output": "x",
                        "assert": [
                            {"type": "contains", "value": "x"},
                            {"type": "fluency", "model": "anthropic:claude-haiku-4-5"},
                        ],
                    }
                ]
            },
            "tests[0].assert[1]",
            "SCOREWIRE_ANTHROPIC_API_KEY",
        ),
        # no judge backend at all for a default-judge assertion
        (
            {"tests": [{"output": "x", "assert": [{"type": "fluency"}]}]},
            "tests[0].assert[0]",
            "SCOREWIRE_OPENAI_API_KEY",
        ),
        # every provider without credentials is listed, at its place in `providers`
        (
            {
                "prompts": ["{{q}}"],
                "providers": ["echo", "anthropic:claude-haiku-4-5", "gemini:gemini-2.5-flash"],
                "tests": [{"vars": {"q": "hi"}, "assert": [{"type": "contains", "value": "h"}]}],
            },
            "providers[1]",
            "SCOREWIRE_ANTHROPIC_API_KEY",
        ),
    ],
)
def test_each_missing_backend_is_named_with_its_field(
    tmp_path: Path, doc: Any, field: str, setting: str
) -> None:
    for command in ("run", "validate"):
        done = run_cli(command, str(write(tmp_path, "s.yaml", doc)))
        assert done.code == 2, done.stdout
        assert f"{field}: " in done.stderr and setting in done.stderr
    if "providers" in doc:
        assert "providers[2]: the gemini provider" in done.stderr


UNPRICED = {
    "judge": {"backend": "openai", "model": "my-local-model"},
    "settings": {"budget": 1.0},
    "tests": [{"output": "Happy to help!", "assert": [{"type": "sentiment"}]}],
}


def test_an_unpriced_judge_in_a_budgeted_run_needs_a_price_or_acceptance(tmp_path: Path) -> None:
    # a budget refuses every call it cannot price: refused up front, also offline
    suite = str(write(tmp_path, "s.yaml", UNPRICED))
    fake = FakeOpenAI(api_key="sk-fake")
    fake.default = Reply(content=json.dumps({"reasoning": "fine", "score": 5}))
    with fake.running():
        env = {"SCOREWIRE_OPENAI_API_KEY": "sk-fake", "SCOREWIRE_OPENAI_BASE_URL": fake.url}
        done = run_cli("run", suite, **env)
        assert done.code == 2 and fake.calls == 0
        assert "tests[0].assert[0]" in done.stderr and "SCOREWIRE_JUDGE_PRICES" in done.stderr
        offline = run_cli("validate", "--offline", suite)
        assert offline.code == 2 and "my-local-model" in offline.stderr
        # the explicit acceptance lets it run (its cost uncounted)
        accepted = run_cli("run", suite, SCOREWIRE_JUDGE_ALLOW_UNPRICED="true", **env)
        assert accepted.code == 0, accepted.stderr
        assert fake.calls == 1


def test_a_gemini_judges_errors_name_gemini(tmp_path: Path) -> None:
    # with a key, the gemini judge's own failures say "gemini", not "openai"
    fake = FakeOpenAI(api_key="gm-key")
    fake.default = Reply(status=400)
    out = tmp_path / "r.json"
    with fake.running():
        done = run_cli(
            "run",
            str(write(tmp_path, "s.yaml", GEMINI_JUDGE)),
            "--output",
            str(out),
            GEMINI_API_KEY="gm-key",
            SCOREWIRE_GEMINI_BASE_URL=fake.url,
        )
    assert done.code == 1, done.stderr
    (result,) = json.loads(out.read_text())["results"]
    error = result["scores"][0]["error"]
    assert error["code"] == "JUDGE_ERROR"
    assert "the gemini judge answered HTTP 400" in error["message"]


EVALSTONE = """
checks:
  tone: {type: judge, rubric: "Is it polite?", model: "anthropic:claude-haiku-4-5"}
  short: {type: length, max_chars: 200}
datasets:
  qa: {path: qa.jsonl}
suites:
  smoke:
    dataset: qa
    target: {type: prompt, provider: "openai:gpt-4o-mini", template: "{{input}}"}
    checks: [tone, short]
"""


def test_an_evalstone_suite_is_checked_the_same_way(tmp_path: Path) -> None:
    # the judge a check names and the target's provider, each at its place in the file
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "input": "hello"}) + "\n")
    suite = str(write(tmp_path, "evalstone.yaml", EVALSTONE))
    for command in ("run", "validate"):
        done = run_cli(command, suite)
        assert done.code == 2, done.stdout
        assert "checks.tone: the anthropic judge backend is not configured" in done.stderr
        assert "suites.smoke.target.provider: the openai provider" in done.stderr
    assert run_cli("validate", "--offline", suite).code == 0
