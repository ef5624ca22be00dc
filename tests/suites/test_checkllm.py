"""checkllm files: loading (every problem with its path), the prompt × provider × test
matrix, recorded outputs, every assertion type of the format, budget and cache."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
import yaml
from scorewire.core.context import CheckContext
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import SpecError
from scorewire.core.model import ErrorCode
from scorewire.engine.metering import request_meter
from scorewire.generation.generator import Generator, JobResult, ProviderCall, Recorded, run_groups
from scorewire.generation.providers import (
    GENERATION_ERROR,
    AnthropicProvider,
    EchoProvider,
    OpenAIChatProvider,
    Provider,
    parse_provider,
)
from scorewire.judge import Budget
from scorewire.settings import Settings
from scorewire.suites.checkllm import load_checkllm_text
from scorewire.suites.checkllm_request import load_request_checkllm
from scorewire.suites.checkllm_suite import CheckllmSuite

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.judge import OPENAI_KEY, judge_harness, verdict


def load(doc: str | Mapping[str, Any]) -> CheckllmSuite:
    text = doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False)
    return load_checkllm_text(textwrap.dedent(text))


def problems(doc: str | Mapping[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(SpecError) as err:
        load(doc)
    return [(v.field, v.description) for v in err.value.violations]


async def run(
    suite: CheckllmSuite,
    *,
    providers: Mapping[str, Provider] | None = None,
    ctx: CheckContext | None = None,
    budget: Budget | None = None,
    cache: bool = True,
) -> dict[str, JobResult]:
    """Run every job; results by sample id."""
    if providers is None:
        providers = {r.id: EchoProvider(r) for r in suite.called_providers()}
    gen = Generator(providers, budget=budget, cache=cache)
    ctx = ctx or CheckContext(budget=budget)
    try:
        return {
            r.job.sample.id: r async for r in run_groups(suite.groups(), gen, ctx, concurrency=4)
        }
    finally:
        await gen.aclose()


def one_test(assertion: Mapping[str, Any], output: str, **extra: Any) -> dict[str, Any]:
    """A file of one recorded test with one assertion."""
    return {"tests": [{"vars": extra.pop("vars", {}), "assert": [assertion], "output": output}]}


# ---- loading -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("doc", "expected"),
    [
        # an unknown top-level key
        ({"tests": [{"output": "x"}], "setings": {}}, ["setings"]),
        # tests are required
        ({"prompts": ["p"]}, ["tests"]),
        # an assertion's value is checked where the file has it
        (
            {"tests": [{"output": "x", "assert": [{"type": "contains", "value": 3}]}]},
            ["tests[0].assert[0].value"],
        ),
        # the third test's first assertion: an unknown type with a suggestion
        (
            {
                "tests": [
                    {"output": "x"},
                    {"output": "x"},
                    {"output": "x", "assert": [{"type": "containz", "value": "a"}]},
                ]
            },
            ["tests[2].assert[0].type"],
        ),
        # a parameter of a judge assertion
        (
            {"tests": [{"output": "x", "assert": [{"type": "relevance", "threshold": 2}]}]},
            ["tests[0].assert[0].threshold"],
        ),
        # an unknown key in a test
        ({"tests": [{"output": "x", "asert": []}]}, ["tests[0].asert"]),
        # settings have types and ranges
        (
            {
                "tests": [{"output": "x"}],
                "settings": {"budget": -1, "threshold": 1.5, "parallel": "yes", "cach": True},
            },
            ["settings.cach", "settings.budget", "settings.threshold", "settings.parallel"],
        ),
        # non-finite numbers (YAML's .nan, .inf) are refused, not taken as no limit
        (
            {"tests": [{"output": "x"}], "settings": {"budget": float("inf")}},
            ["settings.budget"],
        ),
        # asking the judges again is true or false
        ({"tests": [{"output": "x"}], "settings": {"fresh_judges": 1}}, ["settings.fresh_judges"]),
        (
            {"tests": [{"output": "x"}], "settings": {"budget": float("nan")}},
            ["settings.budget"],
        ),
        (
            {"tests": [{"output": "x"}], "settings": {"threshold": float("nan")}},
            ["settings.threshold"],
        ),
        # the judge backend is one of four
        ({"tests": [{"output": "x"}], "judge": {"backend": "mistral"}}, ["judge.backend"]),
        # the gemini judge needs a model
        ({"tests": [{"output": "x"}], "judge": {"backend": "gemini"}}, ["judge.model"]),
        # providers are backend:model
        ({"tests": [{"vars": {}}], "prompts": ["p"], "providers": ["ollama:x"]}, ["providers[0]"]),
        # a provider without a model
        ({"tests": [{"vars": {}}], "prompts": ["p"], "providers": ["openai"]}, ["providers[0]"]),
        # a provider listed twice
        ({"tests": [{}], "prompts": ["p"], "providers": ["echo", "echo"]}, ["providers[1]"]),
        # no providers: every test needs a recorded output
        ({"tests": [{"vars": {"q": 1}}]}, ["tests[0].output"]),
        # a generated test must define every variable its prompts use
        (
            {
                "prompts": ["ok", "Answer {{query}} in {{lang}}"],
                "providers": ["echo"],
                "tests": [{}],
            },
            ["tests[0].vars"],
        ),
        # recorded outputs must belong to a listed provider
        (
            {"prompts": ["p"], "providers": ["echo"], "tests": [{"outputs": {"openai:x": "y"}}]},
            ["tests[0].outputs.openai:x"],
        ),
        # one recorded output per prompt
        (
            {"prompts": ["a", "b"], "providers": ["echo"], "tests": [{"outputs": {"echo": ["y"]}}]},
            ["tests[0].outputs.echo"],
        ),
        # a gate key the gate does not have
        ({"tests": [{"output": "x"}], "gate": {"min_pass": 1}}, ["gate.min_pass"]),
        # generated tests need prompts
        ({"providers": ["echo"], "tests": [{"vars": {}}]}, ["prompts"]),
    ],
)
def test_load_errors_carry_paths(doc: dict[str, Any], expected: list[str]) -> None:
    assert [f for f, _ in problems(doc)] == expected


def test_every_problem_is_reported_at_once() -> None:
    # two broken tests and a broken setting: three violations
    got = problems(
        {
            "tests": [
                {"output": "x", "assert": [{"type": "regex", "value": "("}]},
                {"output": "x", "assert": [{"type": "max_tokens", "value": "many"}]},
            ],
            "settings": {"threshold": -1},
        }
    )
    assert [f for f, _ in got] == [
        "settings.threshold",
        "tests[0].assert[0].value",
        "tests[1].assert[0].value",
    ]


def test_missing_variable_names_the_prompt_and_variable() -> None:
    # the message says which prompt uses which undefined variable
    (field, message), *_ = problems(
        {"prompts": ["Hi {{ name }}"], "providers": ["echo"], "tests": [{"vars": {"x": 1}}]}
    )
    assert field == "tests[0].vars" and "prompts[0]" in message and "{{name}}" in message


def test_rendered_prompts_are_charged_before_any_is_rendered() -> None:
    # Every test's vars in every prompt, summed (each run renders them all): the test
    # that passes max_prompt_chars_per_request is named. Unmetered (the CLI), it loads.
    doc = {
        "prompts": ["{{q}}", "{{q}} {{q}}"],
        "tests": [
            {"vars": {"q": "x" * 100}, "assert": [{"type": "contains", "value": "x"}]},
            {"vars": {"q": "y" * 1_000}, "assert": [{"type": "contains", "value": "y"}]},
        ],
        "providers": ["echo"],
    }
    text = yaml.safe_dump(doc)
    meter = request_meter(Settings(max_prompt_chars_per_request=1_000))
    with pytest.raises(LimitExceeded) as info:
        load_request_checkllm(text, meter=meter)
    assert info.value.setting == "max_prompt_chars_per_request"
    assert info.value.field == "suite_yaml.tests[1].vars"
    assert load_request_checkllm(text, meter=request_meter(Settings()))
    assert load(text)


def test_defaults_of_the_format() -> None:
    # budget 10, threshold 0.8, parallel, cache; judge auto
    suite = load({"tests": [{"output": "x"}]})
    s = suite.settings
    assert (s.budget, s.threshold, s.parallel, s.cache) == (10.0, 0.8, True, True)
    assert not s.fresh_judges  # the judges' cached verdicts are read
    assert suite.judge.backend == "auto" and suite.judge.model_param() is None
    assert s.effective_concurrency == 16
    # parallel: false runs one combination at a time
    assert (
        load(
            {"tests": [{"output": "x"}], "settings": {"parallel": False}}
        ).settings.effective_concurrency
        == 1
    )


@pytest.mark.parametrize(
    ("judge", "model"),
    [
        # backend and model
        ({"backend": "openai", "model": "gpt-4o"}, "openai:gpt-4o"),
        # a backend alone takes its default model
        ({"backend": "anthropic"}, "anthropic"),
        # auto with a model: that model on the default backend
        ({"backend": "auto", "model": "gpt-4o-mini"}, "gpt-4o-mini"),
        # gemini goes through the OpenAI-compatible judge backend
        ({"backend": "gemini", "model": "gemini-2.5-flash"}, "openai:gemini-2.5-flash"),
    ],
)
def test_judge_section_sets_the_model_of_judge_assertions(
    judge: dict[str, str], model: str
) -> None:
    suite = load(
        {
            "judge": judge,
            "tests": [
                {
                    "output": "x",
                    "assert": [
                        {"type": "fluency"},
                        {"type": "coherence", "model": "anthropic:claude-haiku-4-5"},
                        {"type": "judge", "rubric": "Is polite."},
                        {"type": "contains", "value": "x"},
                    ],
                }
            ],
        }
    )
    specs = suite.tests[0].specs
    assert specs[0].params["model"] == model
    # an assertion's own model wins
    assert specs[1].params["model"] == "anthropic:claude-haiku-4-5"
    # scorewire's own judge check gets it too
    assert specs[2].params["model"] == model
    # deterministic checks get no model
    assert "model" not in specs[3].params


def test_settings_threshold_is_the_default_of_judge_assertions() -> None:
    # the file's threshold fills in; an assertion's own threshold wins; bleu keeps its own
    suite = load(
        {
            "settings": {"threshold": 0.6},
            "tests": [
                {
                    "output": "x",
                    "assert": [
                        {"type": "relevance"},
                        {"type": "toxicity", "threshold": 0.9},
                        {"type": "bleu", "value": "x"},
                    ],
                }
            ],
        }
    )
    specs = suite.tests[0].specs
    assert specs[0].params["threshold"] == 0.6
    assert specs[1].params["threshold"] == 0.9
    assert "threshold" not in specs[2].params


# ---- the matrix -----------------------------------------------------------------------------

MATRIX = """
description: matrix
prompts:
  - "Answer: {{query}}"
  - "Be brief. {{query}} ({{lang}})"
providers: [echo, "echo:loud"]
tests:
  - description: capital
    vars: {query: "Capital of France?", lang: en}
    assert:
      - {type: contains, value: "France"}
      - {type: starts_with, value: "Answer"}
  - vars: {query: "Two plus two?", lang: de, expected: "4"}
    assert:
      - {type: max_tokens, value: 50}
"""


async def test_every_prompt_provider_and_test_is_a_case() -> None:
    # 2 prompts × 2 providers × 2 tests = 8 cases named t/p/provider, in test-major order
    suite = load(MATRIX)
    ids = [j.sample.id for g in suite.groups() for j in g.jobs]
    assert ids == [
        f"t{t}/p{p}/{prov}" for t in (0, 1) for p in (0, 1) for prov in ("echo", "echo:loud")
    ]
    results = await run(suite)
    assert set(results) == set(ids)
    # echo returns the rendered prompt
    assert results["t0/p1/echo"].produced.output.text == "Be brief. Capital of France? (en)"
    # each test is scored with its own assertions
    assert results["t0/p0/echo"].names == ["contains", "starts_with"]
    assert results["t1/p0/echo"].names == ["max_tokens"]
    # the second prompt does not start with "Answer"
    assert results["t0/p0/echo"].result.passed and not results["t0/p1/echo"].result.passed
    # the sample carries vars as input, the var `expected`, and where it came from
    sample = results["t1/p1/echo:loud"].job.sample
    assert sample.input == {"query": "Two plus two?", "lang": "de", "expected": "4"}
    assert sample.expected == "4"
    assert sample.metadata == {
        "test": 1,
        "description": "",
        "prompt_index": 1,
        "provider": "echo:loud",
    }
    assert results["t1/p1/echo:loud"].job.prompt == "Be brief. Two plus two? (de)"


async def test_recorded_outputs_need_no_provider_call() -> None:
    # `outputs` per provider (one per prompt), `output` for the rest
    suite = load(
        {
            "prompts": ["a {{q}}", "b {{q}}"],
            "providers": ["openai:gpt-4o", "echo"],
            "tests": [
                {
                    "vars": {"q": "?"},
                    "output": "shared",
                    "outputs": {"openai:gpt-4o": ["first", "second"]},
                    "assert": [{"type": "contains", "value": "s"}],
                }
            ],
        }
    )
    assert suite.called_providers() == []
    results = await run(suite, providers={})
    texts = {sid: r.produced.output.text for sid, r in results.items()}
    assert texts == {
        "t0/p0/openai:gpt-4o": "first",
        "t0/p1/openai:gpt-4o": "second",
        "t0/p0/echo": "shared",
        "t0/p1/echo": "shared",
    }
    assert all(isinstance(j.source, Recorded) for g in suite.groups() for j in g.jobs)


def test_a_file_without_providers_scores_recorded_outputs() -> None:
    # the provider is then `recorded`, and there is one implicit prompt
    suite = load({"tests": [{"output": "x", "assert": [{"type": "is_json"}]}]})
    (job,) = suite.groups()[0].jobs
    assert job.sample.id == "t0/p0/recorded" and isinstance(job.source, Recorded)


def _fake_answer(body: Any) -> Reply:
    """A stand-in provider that says which model answered which prompt."""
    if "response_format" in body:  # a judge request
        return Reply(content=verdict(5))
    return Reply(content=f"[{body['model']}] {body['messages'][-1]['content']}")


async def test_matrix_against_the_stand_in_servers() -> None:
    # OpenAI-compatible and Anthropic providers through the real SDKs, over HTTP
    suite = load(
        """
        prompts: ["Q1 {{q}}", "Q2 {{q}}"]
        providers: ["openai:gpt-4o-mini", "anthropic:claude-haiku-4-5", echo]
        tests:
          - vars: {q: "alpha"}
            assert: [{type: contains, value: "alpha"}]
          - vars: {q: "beta"}
            assert: [{type: not_contains, value: "alpha"}]
        """
    )
    with (
        FakeOpenAI(api_key=OPENAI_KEY).running() as oa,
        FakeAnthropic(api_key="ak").running() as an,
    ):
        oa.responder = _fake_answer
        an.responder = lambda body: Reply(content=f"[claude] {body['messages'][-1]['content']}")
        providers: dict[str, Provider] = {
            "openai:gpt-4o-mini": OpenAIChatProvider(
                parse_provider("openai:gpt-4o-mini"), api_key=OPENAI_KEY, base_url=oa.url
            ),
            "anthropic:claude-haiku-4-5": AnthropicProvider(
                parse_provider("anthropic:claude-haiku-4-5"), api_key="ak", base_url=an.url
            ),
            "echo": EchoProvider(),
        }
        results = await run(suite, providers=providers)
        assert oa.calls == 4 and an.calls == 4
    assert len(results) == 12
    assert results["t0/p1/openai:gpt-4o-mini"].produced.output.text == "[gpt-4o-mini] Q2 alpha"
    assert results["t1/p0/anthropic:claude-haiku-4-5"].produced.output.text == "[claude] Q1 beta"
    assert all(r.result.passed for r in results.values())
    # priced models report what generating cost
    assert results["t0/p0/openai:gpt-4o-mini"].produced.cost_usd > 0


async def test_provider_failure_is_an_error_score_for_every_check() -> None:
    # a 400 from the provider: the case's checks error (never pass), the key is not echoed
    suite = load(
        {
            "prompts": ["{{q}}"],
            "providers": ["openai:gpt-4o-mini"],
            "tests": [{"vars": {"q": "x"}, "assert": [{"type": "not_contains", "value": "z"}]}],
        }
    )
    with FakeOpenAI(api_key=OPENAI_KEY).running() as oa:
        oa.script(Reply(status=400, error_message=f"bad key {OPENAI_KEY}"))
        provider = OpenAIChatProvider(
            parse_provider("openai:gpt-4o-mini"), api_key=OPENAI_KEY, base_url=oa.url
        )
        results = await run(suite, providers={"openai:gpt-4o-mini": provider})
    (r,) = results.values()
    (score,) = r.result.scores
    assert r.produced.output is None and not r.result.passed
    assert score.error is not None and score.error.code == GENERATION_ERROR
    assert "HTTP 400" in score.error.message and OPENAI_KEY not in score.error.message


async def test_generation_spends_the_budget() -> None:
    # a spent budget refuses generation: BUDGET_EXHAUSTED on every check; echo stays free
    suite = load(
        {
            "prompts": ["{{q}}"],
            "providers": ["openai:gpt-4o-mini", "echo"],
            "tests": [{"vars": {"q": "x"}, "assert": [{"type": "contains", "value": "x"}]}],
        }
    )
    with FakeOpenAI(api_key=OPENAI_KEY).running() as oa:
        provider = OpenAIChatProvider(
            parse_provider("openai:gpt-4o-mini"), api_key=OPENAI_KEY, base_url=oa.url
        )
        results = await run(
            suite,
            providers={"openai:gpt-4o-mini": provider, "echo": EchoProvider()},
            budget=Budget(0.0),
        )
        assert oa.calls == 0
    refused = results["t0/p0/openai:gpt-4o-mini"].result.scores[0]
    assert refused.error is not None and refused.error.code == ErrorCode.BUDGET_EXHAUSTED
    assert results["t0/p0/echo"].result.passed


@pytest.mark.parametrize(
    ("cache", "calls", "cached"),
    [
        # identical prompts to one provider are asked once with the cache on
        (True, 1, 1),
        # and every time with it off
        (False, 2, 0),
    ],
)
async def test_identical_generations_are_shared_when_caching(
    cache: bool, calls: int, cached: int
) -> None:
    suite = load(
        {
            "prompts": ["{{q}}"],
            "providers": ["openai:gpt-4o-mini"],
            "settings": {"parallel": False},
            "tests": [
                {"vars": {"q": "same"}, "assert": [{"type": "contains", "value": "same"}]},
                {"vars": {"q": "same"}, "assert": [{"type": "not_contains", "value": "x"}]},
            ],
        }
    )
    with FakeOpenAI(api_key=OPENAI_KEY).running() as oa:
        oa.responder = _fake_answer
        provider = OpenAIChatProvider(
            parse_provider("openai:gpt-4o-mini"), api_key=OPENAI_KEY, base_url=oa.url
        )
        results = await run(suite, providers={"openai:gpt-4o-mini": provider}, cache=cache)
        assert oa.calls == calls
    assert sum(r.produced.cached for r in results.values()) == cached
    assert all(r.result.passed for r in results.values())


# ---- every deterministic assertion type through the format -----------------------------------

LONG = " ".join(["word"] * 60)


class StubEmbeddings:
    """Vectors by text, for `similarity` without an endpoint."""

    async def embed(
        self, texts: Sequence[str], *, timeout_s: float | None = None
    ) -> list[list[float]]:
        vectors = {"cats": [1.0, 0.0], "kittens": [0.9, 0.1], "taxes": [0.0, 1.0]}
        return [vectors[t] for t in texts]


DETERMINISTIC = [
    # contains: the substring is there / is not
    ({"type": "contains", "value": "Paris"}, "Paris is lovely", True),
    ({"type": "contains", "value": "Paris"}, "Rome is lovely", False),
    # not_contains
    ({"type": "not_contains", "value": "Rome"}, "Paris", True),
    ({"type": "not_contains", "value": "Rome"}, "Rome", False),
    # exact_match is the whole output, verbatim: white space around it counts
    ({"type": "exact_match", "value": "Paris"}, "Paris", True),
    ({"type": "exact_match", "value": "Paris"}, "Paris.", False),
    ({"type": "exact_match", "value": "Paris"}, "Paris ", False),
    ({"type": "exact_match", "value": "Paris"}, "Paris\n", False),
    ({"type": "exact_match", "value": "Paris"}, "  Paris", False),
    # regex searches the output
    ({"type": "regex", "value": "^P\\w+s$"}, "Paris", True),
    ({"type": "regex", "value": "^P\\w+s$"}, "Lyon", False),
    # starts_with / ends_with, case-sensitive
    ({"type": "starts_with", "value": "Par"}, "Paris", True),
    ({"type": "starts_with", "value": "par"}, "Paris", False),
    ({"type": "ends_with", "value": "ris"}, "Paris", True),
    ({"type": "ends_with", "value": "ris"}, "Paris!", False),
    # max_tokens / min_tokens count real BPE tokens
    ({"type": "max_tokens", "value": 5}, "Paris", True),
    ({"type": "max_tokens", "value": 5}, LONG, False),
    ({"type": "min_tokens", "value": 5}, LONG, True),
    ({"type": "min_tokens", "value": 5}, "Paris", False),
    # word_count is an upper bound
    ({"type": "word_count", "value": 3}, "one two three", True),
    ({"type": "word_count", "value": 3}, "one two three four", False),
    # is_json
    ({"type": "is_json"}, '{"a": [1, 2]}', True),
    ({"type": "is_json"}, "{'a': 1}", False),
    # no_pii
    ({"type": "no_pii"}, "Nothing personal here.", True),
    ({"type": "no_pii"}, "Mail ada.lovelace@example.com now.", False),
    # bleu / rouge_l against `value`, default threshold 0.5
    ({"type": "bleu", "value": "the cat sat on the mat"}, "the cat sat on the mat", True),
    ({"type": "bleu", "value": "the cat sat on the mat"}, "dogs run fast", False),
    ({"type": "rouge_l", "value": "東京は日本の首都です"}, "東京は日本の首都です", True),
    ({"type": "rouge_l", "value": "the cat sat on the mat"}, "dogs run fast", False),
    # similarity: embedding cosine ≥ 0.8
    ({"type": "similarity", "value": "cats"}, "kittens", True),
    ({"type": "similarity", "value": "cats"}, "taxes", False),
    # is_valid_python parses, never runs
    ({"type": "is_valid_python"}, "def f(x):\n    return x + 1\n", True),
    ({"type": "is_valid_python"}, "def f(:", False),
    # language by ISO code
    (
        {"type": "language", "value": "en"},
        "This is clearly an English sentence about the weather today.",
        True,
    ),
    (
        {"type": "language", "value": "en"},
        "Ceci est clairement une phrase en français sur la météo du jour.",
        False,
    ),
]


@pytest.mark.parametrize(("assertion", "output", "passed"), DETERMINISTIC)
async def test_deterministic_assertions_through_the_format(
    assertion: dict[str, Any], output: str, passed: bool
) -> None:
    suite = load(one_test(assertion, output))
    ctx = CheckContext(extras={"embeddings": StubEmbeddings()})
    (r,) = (await run(suite, ctx=ctx)).values()
    (score,) = r.result.scores
    assert score.error is None, score
    assert score.passed is passed, score
    assert r.names == [assertion["type"]]


def test_every_deterministic_type_of_the_format_is_covered() -> None:
    # the table above holds a passing and a failing case of every type
    types = {"contains", "not_contains", "exact_match", "regex", "starts_with", "ends_with"}
    types |= {"max_tokens", "min_tokens", "word_count", "is_json", "no_pii", "bleu"}
    types |= {"rouge_l", "similarity", "is_valid_python", "language"}
    covered = {(a["type"], p) for a, _, p in DETERMINISTIC}
    assert covered == {(t, p) for t in types for p in (True, False)}


async def test_similarity_without_embeddings_is_an_error() -> None:
    # no endpoint configured: an error score, never a pass
    suite = load(one_test({"type": "similarity", "value": "cats"}, "kittens"))
    (r,) = (await run(suite)).values()
    (score,) = r.result.scores
    assert score.error is not None and not score.passed


# ---- every judge assertion type through the format, against the stand-in judge ---------------

JUDGE_TYPES = [
    ("relevance", {}),
    ("hallucination", {}),
    ("faithfulness", {}),
    ("toxicity", {}),
    ("fluency", {}),
    ("coherence", {}),
    ("correctness", {}),
    ("rubric", {"value": "Mentions 30 days."}),
    ("sentiment", {}),
    ("bias", {}),
    ("summarization", {}),
    ("instruction_following", {"value": "One sentence."}),
    ("role_adherence", {}),
    ("groundedness", {}),
    ("answer_completeness", {}),
    ("context_relevance", {}),
]
JUDGE_VARS = {
    "query": "How do I return an item?",
    "context": "Items can be returned within 30 days with a receipt.",
    "expected": "Within 30 days.",
    "role": "support agent",
}


def _judge_file(threshold: float, asserts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "judge": {"backend": "openai", "model": "gpt-4o-mini"},
        "prompts": ["Support agent: {{query}}"],
        "providers": ["echo"],
        "settings": {"threshold": threshold},
        "tests": [{"vars": dict(JUDGE_VARS), "assert": asserts}],
    }


@pytest.mark.parametrize(
    ("level", "threshold", "passed"), [(5, 0.8, True), (4, 0.8, False), (4, 0.75, True)]
)
async def test_every_judge_assertion_through_the_format(
    level: int, threshold: float, passed: bool
) -> None:
    # all sixteen types in one test, graded by the stand-in judge through the openai SDK;
    # settings.threshold decides: level 4 (0.75) fails at 0.8 and passes at 0.75
    asserts = [{"type": name, **params} for name, params in JUDGE_TYPES]
    suite = load(_judge_file(threshold, asserts))
    async with judge_harness() as h:
        h.openai.responder = lambda body: Reply(content=verdict(level))
        ctx = CheckContext(judge=h.service, budget=Budget(2.0))
        (r,) = (await run(suite, ctx=ctx)).values()
        models = {req.body["model"] for req in h.openai.requests}
        prompts = [req.body["messages"][1]["content"] for req in h.openai.requests]
    assert r.names == [name for name, _ in JUDGE_TYPES]
    for name, score in zip(r.names, r.result.scores, strict=True):
        assert score.error is None, (name, score)
        assert score.passed is passed, (name, score)
        assert score.value == (level - 1) / 4
    # the judge model came from the file's judge section
    assert models == {"gpt-4o-mini"}
    # the echo provider's output (the rendered prompt) is what was judged
    assert any("<output>\nSupport agent: How do I return an item?" in p for p in prompts)
    assert len(prompts) == len(JUDGE_TYPES)


async def test_judge_assertion_own_threshold_wins_over_settings() -> None:
    # settings.threshold 0.8 fails level 4; the assertion's threshold 0.5 passes it
    suite = load(_judge_file(0.8, [{"type": "fluency"}, {"type": "coherence", "threshold": 0.5}]))
    async with judge_harness() as h:
        h.openai.responder = lambda body: Reply(content=verdict(4))
        (r,) = (await run(suite, ctx=CheckContext(judge=h.service))).values()
    assert [s.passed for s in r.result.scores] == [False, True]


async def test_judge_cost_and_cache_show_in_scores() -> None:
    # the same question twice: the second verdict comes from the cache at no cost
    suite = load(
        {
            "judge": {"backend": "openai", "model": "gpt-4o-mini"},
            "tests": [
                {"output": "Hello!", "assert": [{"type": "sentiment"}]},
                {"output": "Hello!", "assert": [{"type": "sentiment"}]},
            ],
            "settings": {"parallel": False},
        }
    )
    async with judge_harness() as h:
        h.openai.responder = lambda body: Reply(content=verdict(5))
        results = await run(suite, ctx=CheckContext(judge=h.service))
        assert h.openai.calls == 1
    first, second = (results[f"t{i}/p0/recorded"].result.scores[0] for i in (0, 1))
    assert first.cost_usd > 0 and not first.cached
    assert second.cached and second.cost_usd == 0


def test_results_are_json_ready() -> None:
    # vars with YAML dates do not break loading (they are kept as given)
    suite = load("tests:\n  - vars: {when: 2024-01-02}\n    output: x\n")
    assert json.dumps(suite.tests[0].vars, default=str)
    assert isinstance(suite.groups()[0].jobs[0].source, Recorded)
    assert not isinstance(suite.groups()[0].jobs[0].source, ProviderCall)


def test_a_combination_number_is_its_place_in_run_order() -> None:
    # numbers count jobs in the order groups() makes them: tests, prompts, providers
    suite = load_checkllm_text(
        "prompts: ['a {{q}}', 'b {{q}}', 'c {{q}}']\nproviders: [echo, 'openai:gpt-4o-mini']\n"
        "tests:\n"
        + "".join(f"  - {{vars: {{q: {i}}}, assert: [{{type: contains}}]}}\n" for i in range(4))
    )
    jobs = [job for g in suite.groups() for job in g.jobs]
    for number, job in enumerate(jobs):
        test, prompt, provider = suite.combination(number)
        assert job.sample.id == f"t{test}/p{prompt}/{suite.providers[provider].id}"
        assert suite.combination_number(test, prompt, provider) == number
        made = suite.sample(test, prompt, job.provider)  # what a scoring worker builds
        assert (made.id, made.input, made.expected, made.metadata) == (
            job.sample.id, job.sample.input, job.sample.expected, job.sample.metadata,
        )  # fmt: skip
