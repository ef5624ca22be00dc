"""No credential leaves in a reason, an error or a log line, whatever the upstream sends back.

Issue 13, finding 5: an API key echoed inside a provider's error body reached the Score
reason (the error's `code`/`type` were repeated as they came). Real SDKs against the
protocol stand-ins, which put whatever a test scripts into their answers.
"""

from __future__ import annotations

import io
import logging

import pytest
from scorewire.core.model import ErrorCode, Output
from scorewire.core.secrets import REDACTED, ScrubbingFilter, register, scrub
from scorewire.generation.providers import OpenAIChatProvider, ProviderError, parse_provider
from scorewire.judge.backends.base import BackendError
from scorewire.text.embeddings import EmbeddingsClient, EmbeddingsError

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.judge import ANTHROPIC_KEY, OPENAI_KEY, compile_spec, judge_harness, verdict

# Keys that belong to nobody here: scrubbed for their shape alone.
FOREIGN = [
    "sk-proj-FOREIGNfOrEiGn0123456789abcdef",
    "sk-ant-api03-FOREIGNxyz0123456789",
    "AIzaSyFOREIGN0123456789abcdefghijk",
]


def judge_check(**params: object):  # type: ignore[no-untyped-def]
    return compile_spec("judge", {"rubric": "Is it polite?", **params})


@pytest.mark.parametrize(
    ("model", "field"),
    [
        # a key in the error's code, from OpenAI's wire format
        ("openai:gpt-4o-mini", "code"),
        # in its type
        ("openai:gpt-4o-mini", "type"),
        # and in Anthropic's error object
        ("anthropic:claude-haiku-4-5", "type"),
        ("anthropic:claude-haiku-4-5", "message"),
    ],
)
async def test_a_key_echoed_in_an_error_body_never_reaches_the_reason(
    model: str, field: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    async with judge_harness(judge_max_retries=0) as h:
        fake = h.anthropic if model.startswith("anthropic") else h.openai
        key = ANTHROPIC_KEY if model.startswith("anthropic") else OPENAI_KEY
        fake.script(Reply(status=400, error_fields={field: key}))
        score = await h.run(judge_check(model=model))
    assert score.error is not None and score.error.code == ErrorCode.JUDGE_ERROR
    assert "HTTP 400" in score.reason
    if field == "code":  # a detail scorewire repeats: it was there, and is gone
        assert REDACTED in score.reason
    assert key not in score.reason and key[:12] not in score.reason
    assert key not in caplog.text


async def test_keys_in_refusals_and_verdict_reasoning_are_scrubbed() -> None:
    # the judge's own text becomes the reason (refusal, reasoning): scrubbed too
    leak = f"my key is {OPENAI_KEY}, also {' '.join(FOREIGN)} and Bearer abc.def.ghi"
    async with judge_harness() as h:
        h.openai.script(Reply(content=None, refusal=leak), Reply(content=verdict(5, leak)))
        refused = await h.run(judge_check(), output=Output("one"))
        graded = await h.run(judge_check(), output=Output("two"))
    assert refused.error is not None and refused.error.code == ErrorCode.INVALID_VERDICT
    assert graded.error is None and graded.passed
    for score in (refused, graded):
        assert "my key is" in score.reason  # the rest of the text is kept
        for secret in (OPENAI_KEY, *FOREIGN, "abc.def.ghi"):
            assert secret not in score.reason


async def test_a_configured_key_of_no_known_shape_and_its_fragments_are_scrubbed() -> None:
    # a local proxy's key looks like nothing in particular; a fragment of it is enough
    key = "local-proxy-credential-Q7w9Zr2Lx5"
    async with judge_harness(openai_api_key=key, judge_max_retries=0) as h:
        h.openai.api_key = key
        h.openai.script(Reply(status=400, error_fields={"code": key[6:28]}))
        score = await h.run(judge_check())
    assert score.error is not None and "HTTP 400" in score.reason
    assert key[6:28] not in score.reason and key[-8:] not in score.reason


async def test_a_provider_error_echoing_a_key_is_scrubbed() -> None:
    fake = FakeOpenAI(api_key=OPENAI_KEY)
    with fake.running():
        fake.script(Reply(status=400, error_fields={"code": OPENAI_KEY}))
        ref = parse_provider("openai:gpt-4o-mini")
        provider = OpenAIChatProvider(ref, api_key=OPENAI_KEY, base_url=fake.url)
        try:
            with pytest.raises(ProviderError) as err:
                await provider.generate("hello", timeout_s=5)
        finally:
            await provider.aclose()
    assert "HTTP 400" in err.value.message and OPENAI_KEY not in str(err.value)


def test_every_error_type_of_an_upstream_client_scrubs_its_message() -> None:
    # one scrubber behind the judge backends, the providers and the embeddings client
    EmbeddingsClient(model="m", api_key="emb-configured-K3y9xQ2wE8", base_url="http://x/v1")
    text = "failed: emb-configured-K3y9xQ2wE8 " + " ".join(FOREIGN)
    for err in (
        BackendError(text, retryable=False),
        ProviderError(text),
        EmbeddingsError(text),
    ):
        assert "failed:" in str(err)
        assert "K3y9xQ2wE8" not in str(err)
        assert all(f not in str(err) for f in FOREIGN)


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # prose is untouched
        ("the answer is polite and complete", "the answer is polite and complete"),
        # an Authorization header keeps its label
        ("Authorization: Bearer tok_123.456", "Authorization: Bearer [redacted]"),
        # an x-api-key header likewise
        ('x-api-key: "abc123xyz"', 'x-api-key: "[redacted]"'),
        # words shorter than a key's shape stay
        ("sk-short is fine", "sk-short is fine"),
    ],
)
def test_scrub_removes_key_shapes_and_keeps_the_rest(text: str, kept: str) -> None:
    assert scrub(text) == kept


def test_log_records_are_scrubbed_by_the_filter() -> None:
    register("log-only-secret-Zx81Qp0W")
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(ScrubbingFilter())
    logger = logging.getLogger("tests.secrets.filter")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("upstream said %s and %s", "log-only-secret-Zx81Qp0W", FOREIGN[0])
    finally:
        logger.removeHandler(handler)
    assert "upstream said" in stream.getvalue()
    assert "Zx81Qp0W" not in stream.getvalue() and FOREIGN[0] not in stream.getvalue()
