"""The committed JSON Schemas of both suite formats: fresh, valid, and agreeing with the loaders."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import jsonschema
import pytest
import yaml
from scorewire.core.registry import REGISTRY

from tests.cli.conftest import ROOT, cli_env

SCHEMAS = ROOT / "schemas"

# The complete example of the checkllm format document, as written there.
SEED_EXAMPLE = """
description: "Customer support chatbot evaluation"

judge:
  backend: openai
  model: gpt-4o-mini

prompts:
  - "You are a helpful customer support agent. {{query}}"

providers:
  - openai:gpt-4o
  - openai:gpt-4o-mini

tests:
  - description: "Return policy question"
    vars:
      query: "How do I return an item?"
      context: "Items can be returned within 30 days with receipt."
    assert:
      - type: contains
        value: "return"
      - type: max_tokens
        value: 300
      - type: no_pii
      - type: relevance
        threshold: 0.8
      - type: faithfulness
        threshold: 0.85

  - description: "Greeting should be friendly"
    vars:
      query: "Hi there!"
    assert:
      - type: toxicity
        threshold: 0.9
      - type: fluency
        threshold: 0.8
      - type: sentiment

settings:
  budget: 2.0
  threshold: 0.8
  parallel: true
"""

EVALSTONE_EXAMPLE = """
checks:
  short: {type: length, max_words: 80}
  cites: {type: contains, needles: [Addendum Y], when: {type: contains, needles: [Law X]}}
  polite: {type: judge, rubric: "Is polite.", examples: [{text: "Thanks!", kind: positive}]}
datasets:
  qa: {path: qa.jsonl}
suites:
  smoke:
    dataset: qa
    target: recorded
    checks: [short, cites]
    compact: ["length:1..2000"]
    gate: {min_pass_rate: 0.9, max_error_rate: 0}
  live:
    dataset: qa
    target: {type: prompt, provider: "openai:gpt-4o-mini", template: "Answer: {{input}}"}
    checks: [short]
  app:
    dataset: qa
    target:
      type: http
      url: "http://127.0.0.1:8080/a"
      body: {q: "{{input}}"}
      response_path: answer
settings: {budget: 5.0, concurrency: 32, check_timeout_s: 60}
"""


def schema(name: str) -> dict[str, Any]:
    return json.loads((SCHEMAS / f"{name}-suite.schema.json").read_text())


def errors(name: str, doc: Any) -> list[str]:
    validator = jsonschema.Draft202012Validator(schema(name))
    return ["/".join(map(str, e.absolute_path)) for e in validator.iter_errors(doc)]


def test_committed_schemas_are_fresh() -> None:
    # regenerating from the registry changes nothing (run scripts/gen_schemas.py if it does)
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_schemas.py"), "--check"],
        env=cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize("name", ["checkllm", "evalstone"])
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(name))


def test_results_schema_is_valid() -> None:
    doc = json.loads((SCHEMAS / "results.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(doc)


def test_the_formats_own_example_validates() -> None:
    assert errors("checkllm", yaml.safe_load(SEED_EXAMPLE)) == []


def test_an_evalstone_suite_with_every_target_validates() -> None:
    assert errors("evalstone", yaml.safe_load(EVALSTONE_EXAMPLE)) == []


@pytest.mark.parametrize(
    ("name", "doc", "where"),
    [
        # a misspelt assertion key
        (
            "checkllm",
            {"tests": [{"assert": [{"type": "contains", "valeu": "x"}]}]},
            "tests/0/assert/0",
        ),
        # an assertion type that does not exist
        ("checkllm", {"tests": [{"assert": [{"type": "relevancy"}]}]}, "tests/0/assert/0/type"),
        # a judge type given a value it does not take
        (
            "checkllm",
            {"tests": [{"assert": [{"type": "toxicity", "value": "x"}]}]},
            "tests/0/assert/0",
        ),
        # a provider that is not backend:model
        ("checkllm", {"tests": [{}], "providers": ["gpt-4o"]}, "providers/0"),
        # settings keys of the format only
        ("checkllm", {"tests": [{}], "settings": {"budjet": 1}}, "settings"),
        # a check parameter that does not exist
        ("evalstone", {"checks": {"a": {"type": "length", "max_wrds": 3}}}, "checks/a"),
        # a nested `when:` is a check too
        (
            "evalstone",
            {"checks": {"a": {"type": "length", "when": {"type": "nope"}}}},
            "checks/a/when/type",
        ),
        # an unknown target
        ("evalstone", {"suites": {"s": {"target": "grpc"}}}, "suites/s/target"),
    ],
)
def test_schemas_reject_what_the_loaders_reject(name: str, doc: Any, where: str) -> None:
    assert where in errors(name, doc)


def test_every_builtin_check_type_is_offered() -> None:
    # editors complete every registered built-in type; checkllm adds its renamed ones
    import scorewire.checks  # noqa: F401

    builtin = {
        t.name for t in REGISTRY.types() if t.build.__module__.startswith("scorewire.checks.")
    } | {t.name for t in REGISTRY.alias_types()}

    def offered(name: str, check: str) -> set[str]:
        choices = schema(name)["$defs"][check]["properties"]["type"]["anyOf"]
        return {c["const"] for c in choices}

    assert offered("evalstone", "check") == builtin
    assert offered("checkllm", "assertion") == builtin | {"exact_match", "no_pii"}
