"""Model names, prices, retry timing and cache keys: the judge's pure rules."""

from __future__ import annotations

import pytest
from scorewire.judge.backends.base import parse_retry_after, safe_error_detail
from scorewire.judge.cache_entry import CachedAnswer, verdict_key
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.pricing import PriceTable
from scorewire.judge.prompts import render_grade
from scorewire.judge.retry import RetryPolicy


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        (None, ModelRef(None, None)),  # nothing: the configured default
        ("", ModelRef(None, None)),  # empty: the default
        ("auto", ModelRef(None, None)),  # auto: pick by credentials
        ("openai", ModelRef("openai", None)),  # backend alone: its default model
        ("openai:gpt-4o-mini", ModelRef("openai", "gpt-4o-mini")),  # backend:model
        ("anthropic:claude-haiku-4-5", ModelRef("anthropic", "claude-haiku-4-5")),
        ("openai:llama3:8b", ModelRef("openai", "llama3:8b")),  # Ollama tag after the backend
        ("gpt-4o", ModelRef(None, "gpt-4o")),  # bare model: default backend
        (" OpenAI:gpt-4o ", ModelRef("openai", "gpt-4o")),  # backend is case-insensitive
    ],
)
def test_parse_model(text: str | None, ref: ModelRef) -> None:
    assert parse_model(text) == ref


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("anthropc:claude", "unknown judge backend 'anthropc'"),  # a typo is not silent
        ("llama3:8b", "unknown judge backend 'llama3'"),  # a colon needs a backend first
        ("openai:", "no model after 'openai'"),  # empty model
        ("gemini:gemini-2.0-flash", "unknown judge backend 'gemini'"),  # use openai: + base URL
    ],
)
def test_parse_model_rejects(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_model(text)


@pytest.mark.parametrize(
    ("model", "cost"),
    [
        ("gpt-4o-mini", (1000 * 0.15 + 100 * 0.60) / 1e6),  # built-in entry
        ("gpt-4o-mini-2024-07-18", (1000 * 0.15 + 100 * 0.60) / 1e6),  # dated snapshot
        ("claude-3-5-haiku-20241022", (1000 * 0.80 + 100 * 4.00) / 1e6),  # compact date
        ("claude-3-5-haiku-latest", (1000 * 0.80 + 100 * 4.00) / 1e6),  # -latest alias
        ("models/gemini-2.0-flash", (1000 * 0.10 + 100 * 0.40) / 1e6),  # Gemini's prefix
        ("gpt-4o-audio-preview", None),  # a different model is not guessed
        ("my-local-llama", None),  # unknown: unpriced
    ],
)
def test_builtin_prices(model: str, cost: float | None) -> None:
    got = PriceTable().cost(model, 1000, 100)
    assert got == pytest.approx(cost) if cost is not None else got is None


def test_settings_prices_override_builtin_and_add_models() -> None:
    # an override wins over the built-in entry; a new model becomes priced
    table = PriceTable({"gpt-4o-mini": (1.0, 2.0), "my-llama": (0.0, 0.0)})
    assert table.cost("gpt-4o-mini", 1_000_000, 0) == pytest.approx(1.0)
    assert table.cost("my-llama", 5000, 5000) == 0.0


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "3"}, 3.0),  # seconds
        ({"retry-after": "0.5"}, 0.5),  # fractional seconds
        ({"retry-after-ms": "250"}, 0.25),  # OpenAI's millisecond header wins
        ({"retry-after-ms": "250", "retry-after": "9"}, 0.25),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:10 GMT"}, 10.0),  # an HTTP date
        ({"retry-after": "soon"}, None),  # unreadable: ignored
        ({}, None),  # absent
    ],
)
def test_parse_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    now = 1445412480.0  # 2015-10-21 07:28:00 GMT
    assert parse_retry_after(headers, now=now) == seconds


def test_backoff_doubles_with_jitter_and_caps() -> None:
    # jitter 0 gives half the ceiling, jitter ~1 the full ceiling; the cap holds
    low = RetryPolicy(base_s=1.0, max_s=5.0, rand=lambda: 0.0)
    high = RetryPolicy(base_s=1.0, max_s=5.0, rand=lambda: 0.999999)
    assert [low.backoff(a) for a in range(4)] == [0.5, 1.0, 2.0, 2.5]
    assert [round(high.backoff(a), 3) for a in range(4)] == [1.0, 2.0, 4.0, 5.0]


def test_retry_after_is_never_shortened() -> None:
    # the server's wait is a floor; jitter only adds
    policy = RetryPolicy(base_s=10.0, rand=lambda: 0.5)
    assert policy.delay(0, 2.0) == pytest.approx(2.1)
    assert policy.delay(3, 0.0) == 0.0


def test_error_detail_keeps_identifiers_only() -> None:
    # the provider's message (which can echo a key) is never copied
    body = {"message": "Incorrect API key provided: sk-abc", "type": "invalid_request_error",
            "code": "invalid_api_key"}  # fmt: skip
    assert safe_error_detail(body) == "invalid_request_error/invalid_api_key"
    assert safe_error_detail({"type": "x y<script>"}) == "xyscript"


def _key(**over: object) -> str:
    prompt = over.pop("prompt", render_grade("be kind", 5, [("output", "hi")]))
    args: dict[str, object] = {
        "backend": "openai",
        "model": "gpt-4o-mini",
        "temperature": 0.0,
        "max_tokens": 1024,
    }
    args.update(over)
    return verdict_key(prompt, **args)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "change",
    [
        {"backend": "anthropic"},  # backend
        {"model": "gpt-4o"},  # model
        {"temperature": 0.7},  # sampling
        {"max_tokens": 512},  # sampling
        {"prompt": render_grade("be kind", 5, [("output", "hi!")])},  # the output
        {"prompt": render_grade("be kind", 4, [("output", "hi")])},  # the scale
        {"prompt": render_grade("be kinder", 5, [("output", "hi")])},  # the rubric
    ],
)
def test_cache_key_covers_everything_that_shapes_the_verdict(change: dict[str, object]) -> None:
    assert _key(**change) != _key()


def test_cache_key_covers_prompt_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # a new prompt version invalidates every verdict
    before = _key()
    monkeypatch.setattr("scorewire.judge.cache_entry.PROMPT_VERSION", "scorewire-judge/999")
    assert _key() != before


def test_cache_key_is_stable() -> None:
    # the same question gives the same key (so the cache can hit)
    assert _key() == _key()


def test_cached_answer_roundtrip_and_garbage() -> None:
    a = CachedAnswer('{"score": 3}', 10, 2)
    assert CachedAnswer.loads(a.dumps()) == a
    assert CachedAnswer.loads("not json") is None  # garbage is a miss, not a crash
    assert CachedAnswer.loads('{"v": 2, "text": "x"}') is None  # unknown format version


@pytest.mark.parametrize(
    "values",
    [
        # a negative price would make calls refund the budget
        {"judge_prices": {"m": (-1.0, 1.0)}},
        # NaN compares false with every limit
        {"judge_prices": {"m": (1.0, float("nan"))}},
        # the fallback likewise
        {"judge_fallback_price": (float("inf"), 1.0)},
        {"judge_fallback_price": (1.0, -0.5)},
    ],
)
def test_prices_that_are_not_finite_and_non_negative_are_refused_at_load(
    values: dict[str, object],
) -> None:
    from pydantic import ValidationError
    from scorewire.settings import Settings

    with pytest.raises(ValidationError) as err:
        Settings(**values)  # type: ignore[arg-type]
    assert "finite number" in str(err.value)  # ours for negatives, pydantic's for NaN/inf


def test_fallback_price_prices_only_models_in_no_table() -> None:
    table = PriceTable({"mine": (0.0, 0.0)}, fallback=(1.0, 2.0))
    assert table.cost("gpt-4o-mini", 1000, 100) == pytest.approx((1000 * 0.15 + 100 * 0.6) / 1e6)
    assert table.cost("mine", 1000, 100) == 0.0
    assert table.cost("o1-pro", 1000, 100) == pytest.approx((1000 * 1.0 + 100 * 2.0) / 1e6)
    assert table.unpriced_refusal("o1-pro") is None
    refusal = PriceTable().unpriced_refusal("o1-pro")
    assert refusal is not None and "SCOREWIRE_JUDGE_PRICES" in refusal
    assert PriceTable(allow_unpriced=True).unpriced_refusal("o1-pro") is None


@pytest.mark.parametrize(
    ("usage", "problem"),
    [
        # what a call allowed: fine
        ((1000, 100), None),
        # unreported usage is unknown, not impossible
        ((None, None), None),
        # negative counts
        ((-1, 100), "negative"),
        ((1000, -1), "negative"),
        # past the prompt's bound or max_tokens
        ((1001, 100), "more than this prompt"),
        ((1000, 101), "max_tokens"),
    ],
)
def test_usage_problem(usage: tuple[int | None, int | None], problem: str | None) -> None:
    from scorewire.judge.pricing import usage_problem

    found = usage_problem(*usage, prompt_bound=1000, max_tokens=100)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_prompt_bound_counts_utf8_bytes_and_overhead() -> None:
    from scorewire.judge.pricing import PROMPT_OVERHEAD_TOKENS, prompt_token_bound

    assert prompt_token_bound("abc", "é", None) == 3 + 2 + PROMPT_OVERHEAD_TOKENS
    assert prompt_token_bound({"a": 1}) == len('{"a":1}') + PROMPT_OVERHEAD_TOKENS
