"""What a provider call answers, through the real SDKs against the protocol stand-ins:
the text and its tokens, and every way of producing nothing, each as its own reason."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest
from scorewire.generation.accounts import SdkClients
from scorewire.generation.providers import (
    AnthropicProvider,
    OpenAIChatProvider,
    Provider,
    ProviderError,
    parse_provider,
)

from tests.fakes.anthropic_server import FakeAnthropic
from tests.fakes.base import FakeLLMServer, Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.judge import ANTHROPIC_KEY, OPENAI_KEY


@pytest.fixture(params=["openai", "anthropic"])
def fake(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer]:
    server: FakeLLMServer = (
        FakeOpenAI(api_key=OPENAI_KEY)
        if request.param == "openai"
        else FakeAnthropic(api_key=ANTHROPIC_KEY)
    )
    with server.running():
        yield server


def provider(fake: FakeLLMServer, clients: SdkClients | None = None) -> Provider:
    if isinstance(fake, FakeOpenAI):
        ref = parse_provider("openai:gpt-4o-mini")
        return OpenAIChatProvider(ref, api_key=OPENAI_KEY, base_url=fake.url, clients=clients)
    ref = parse_provider("anthropic:claude-haiku-4-5")
    return AnthropicProvider(ref, api_key=ANTHROPIC_KEY, base_url=fake.url, clients=clients)


async def generate(p: Provider, prompt: str = "What is the capital of France?", **kw: object):  # type: ignore[no-untyped-def]
    try:
        return await p.generate(prompt, timeout_s=kw.pop("timeout_s", 10.0), **kw)  # type: ignore[arg-type]
    finally:
        await p.aclose()


async def test_an_answer_is_its_text_and_tokens(fake: FakeLLMServer) -> None:
    fake.script(Reply(content="Paris.", input_tokens=12, output_tokens=3))
    made = await generate(provider(fake), max_tokens=50)
    assert (made.text, made.input_tokens, made.output_tokens) == ("Paris.", 12, 3)
    sent = fake.requests[-1].body
    assert sent["model"] in ("gpt-4o-mini", "claude-haiku-4-5") and sent["max_tokens"] == 50
    assert sent["messages"] == [{"role": "user", "content": "What is the capital of France?"}]


async def test_an_answer_without_usage_has_no_token_counts(fake: FakeLLMServer) -> None:
    if isinstance(fake, FakeAnthropic):
        pytest.skip("the Messages API always reports usage")
    fake.script(Reply(content="Paris.", input_tokens=None, output_tokens=None))
    made = await generate(provider(fake))
    assert (made.text, made.input_tokens, made.output_tokens) == ("Paris.", None, None)


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (Reply(refusal="I cannot help with that."), "refused"),
        (Reply(raw_body="{not json"), "malformed response"),
        (Reply(status=400, error_message=f"bad key {OPENAI_KEY}"), "answered HTTP 400"),
        (Reply(status=500), "answered HTTP 500"),
    ],
    ids=["refusal", "malformed", "400", "500"],
)
async def test_no_answer_is_a_provider_error_that_says_why(
    fake: FakeLLMServer, reply: Reply, words: str
) -> None:
    fake.script(reply, reply, reply)  # the SDK retries a 500
    with pytest.raises(ProviderError) as caught:
        await generate(provider(fake))
    assert words in caught.value.message and OPENAI_KEY not in caught.value.message


async def test_a_call_past_its_timeout_says_it_timed_out(fake: FakeLLMServer) -> None:
    fake.script(*[Reply(hang=True)] * 3)
    with pytest.raises(ProviderError) as caught:
        await generate(provider(fake), timeout_s=0.3)
    assert "timed out" in caught.value.message


async def test_a_provider_nobody_answers_cannot_be_reached() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, not listening: connections are refused
        ref = parse_provider("openai:gpt-4o-mini")
        p = OpenAIChatProvider(
            ref, api_key=OPENAI_KEY, base_url=f"http://127.0.0.1:{port}/v1", max_retries=0
        )
        with pytest.raises(ProviderError) as caught:
            await generate(p)
    assert "could not reach" in caught.value.message


async def test_a_server_that_refuses_max_tokens_gets_max_completion_tokens() -> None:
    fake = FakeOpenAI(api_key=OPENAI_KEY)
    fake.script(
        Reply(
            status=400,
            error_message="Unsupported parameter: 'max_tokens'. Use 'max_completion_tokens'.",
        ),
        Reply(content="Paris."),
    )
    with fake.running():
        made = await generate(provider(fake), max_tokens=50)
    assert made.text == "Paris."
    first, second = (r.body for r in fake.requests)
    assert first["max_tokens"] == 50 and "max_completion_tokens" not in first
    assert second["max_completion_tokens"] == 50 and "max_tokens" not in second


async def test_providers_of_shared_clients_outlive_each_other(fake: FakeLLMServer) -> None:
    # A request's providers close when it ends; the client they share stays open for the
    # next request's, and closes with the server.
    clients = SdkClients()
    try:
        fake.script(Reply(content="one"), Reply(content="two"))
        assert (await generate(provider(fake, clients))).text == "one"
        assert (await generate(provider(fake, clients))).text == "two"
        assert len(clients) == 1
    finally:
        await clients.aclose()
    assert len(clients) == 0
