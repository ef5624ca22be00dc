"""Provider calls under a budget: ceilings reserved, unpriced models refused, usage checked.

Real `openai` SDK clients against the OpenAI stand-in on loopback.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from scorewire.core.model import ErrorCode
from scorewire.generation.generator import Generator, ProviderCall
from scorewire.generation.providers import (
    BUDGETED_MAX_TOKENS,
    GENERATION_ERROR,
    OpenAIChatProvider,
    parse_provider,
)
from scorewire.judge import Budget
from scorewire.judge.pricing import PriceTable

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.judge import OPENAI_KEY


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI(api_key=OPENAI_KEY, default=Reply(content="an answer"))
    with server.running():
        yield server


def generator(fake: FakeOpenAI, model: str, budget: Budget | None, **prices: object) -> Generator:
    ref = parse_provider(model)
    provider = OpenAIChatProvider(ref, api_key=OPENAI_KEY, base_url=fake.url)
    return Generator({ref.id: provider}, budget=budget, prices=PriceTable(**prices))  # type: ignore[arg-type]


async def produce(gen: Generator, model: str, n: int = 1) -> list:  # type: ignore[type-arg]
    try:
        return [await gen.produce(ProviderCall(model, f"question {i}")) for i in range(n)]
    finally:
        await gen.aclose()


async def test_budgeted_generation_with_an_unpriced_model_is_refused(fake: FakeOpenAI) -> None:
    # the same hole as the judge's: an unknown model's calls used to cost nothing
    budget = Budget(0.001)
    made = await produce(generator(fake, "openai:o1-pro", budget), "openai:o1-pro", 20)
    assert fake.calls == 0 and budget.spent_usd == 0.0
    for p in made:
        assert p.output is None and p.error.code == ErrorCode.UNPRICED_MODEL
        assert "o1-pro" in p.error.message and "SCOREWIRE_JUDGE_PRICES" in p.error.message


async def test_allowed_unpriced_generation_runs_uncounted(fake: FakeOpenAI) -> None:
    budget = Budget(0.001)
    gen = generator(fake, "openai:o1-pro", budget, allow_unpriced=True)
    (made,) = await produce(gen, "openai:o1-pro")
    assert made.output is not None and made.unpriced and budget.unpriced_calls == 1


async def test_budgeted_generation_sends_a_limit_and_reserves_its_ceiling(
    fake: FakeOpenAI,
) -> None:
    # gpt-4o-mini: the ceiling is the prompt and 1024 completion tokens, about $0.0007
    budget = Budget(0.01)
    (made,) = await produce(generator(fake, "openai:gpt-4o-mini", budget), "openai:gpt-4o-mini")
    assert made.output is not None and made.cost_usd == pytest.approx(
        (100 * 0.15 + 20 * 0.60) / 1e6
    )
    assert fake.requests[0].body["max_tokens"] == BUDGETED_MAX_TOKENS
    assert budget.spent_usd == pytest.approx(made.cost_usd)
    # a budget smaller than the ceiling refuses before calling
    small = Budget(0.0005)
    (refused,) = await produce(generator(fake, "openai:gpt-4o-mini", small), "openai:gpt-4o-mini")
    assert refused.error.code == ErrorCode.BUDGET_EXHAUSTED and fake.calls == 1


async def test_unbudgeted_generation_sends_no_limit(fake: FakeOpenAI) -> None:
    await produce(generator(fake, "openai:gpt-4o-mini", None), "openai:gpt-4o-mini")
    body = fake.requests[0].body
    assert "max_tokens" not in body and "max_completion_tokens" not in body


@pytest.mark.parametrize(
    ("input_tokens", "output_tokens"),
    [
        # a negative count would refund the budget
        (-1_000_000, 20),
        # more completion tokens than the limit sent
        (100, 10**9),
    ],
)
async def test_impossible_generation_usage_fails_and_is_charged_the_ceiling(
    fake: FakeOpenAI, input_tokens: int, output_tokens: int
) -> None:
    fake.script(Reply(content="x", input_tokens=input_tokens, output_tokens=output_tokens))
    budget = Budget(0.01)
    (made,) = await produce(generator(fake, "openai:gpt-4o-mini", budget), "openai:gpt-4o-mini")
    assert made.output is None and made.error.code == GENERATION_ERROR
    assert "the upstream reported" in made.error.message
    assert budget.spent_usd > 0 and (budget.remaining_usd() or 0) < 0.01


async def test_a_server_refusing_max_tokens_gets_max_completion_tokens(fake: FakeOpenAI) -> None:
    # OpenAI's reasoning models answer 400 to max_tokens; the switch is remembered
    refusal = Reply(
        status=400,
        error_message="Unsupported parameter: 'max_tokens' is not supported with this model.",
        error_fields={"param": "max_tokens"},
    )
    fake.script(refusal)
    made = await produce(generator(fake, "openai:o3", Budget(1.0)), "openai:o3", 2)
    assert all(p.output is not None for p in made)
    sent = [sorted(k for k in r.body if "max" in k) for r in fake.requests]
    assert sent == [["max_tokens"], ["max_completion_tokens"], ["max_completion_tokens"]]
