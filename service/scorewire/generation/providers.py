"""Providers: the models whose outputs a suite scores, called as `backend:model`.

The judge package's backends answer judge prompts (a system message, a JSON verdict
schema); generating an application's output is a plain chat turn, so providers are
their own small clients over the same official SDKs with the same settings:

- `openai:<model>`: OpenAI or any OpenAI-compatible server; key
  `SCOREWIRE_OPENAI_API_KEY` or `OPENAI_API_KEY`, base URL `SCOREWIRE_OPENAI_BASE_URL`
  or `OPENAI_BASE_URL` (the judge's settings).
- `anthropic:<model>`: the Anthropic Messages API; `SCOREWIRE_ANTHROPIC_API_KEY` or
  `ANTHROPIC_API_KEY`, base URL `SCOREWIRE_ANTHROPIC_BASE_URL` or `ANTHROPIC_BASE_URL`.
- `gemini:<model>`: Gemini's OpenAI-compatible endpoint; `SCOREWIRE_GEMINI_API_KEY`,
  `GEMINI_API_KEY` or `GOOGLE_API_KEY`, base URL `SCOREWIRE_GEMINI_BASE_URL` or
  `GEMINI_BASE_URL` (default Google's, `GEMINI_BASE_URL` below).
- `echo` (or `echo:<anything>`): no endpoint; returns the rendered prompt, free.

The prompt is sent as one user message. Anthropic needs `max_tokens`: 1024 is sent
unless the caller gives a limit; OpenAI-compatible servers get no limit (their default)
unless the caller gives one, which a budgeted run always does (a budget can only hold
a call whose cost is bounded). A server that refuses `max_tokens` (OpenAI's reasoning
models) gets `max_completion_tokens` instead, remembered for the provider's life. Calls
go through their account (`generation.accounts`): its shared SDK client, its window of
calls at once learned from 429s, and retries (a generation is not deduplicated by a
verdict cache, so a transient 429 should not cost the case). Errors never carry the
provider's message (it can echo credentials): only the HTTP status and the error type,
scrubbed (`scorewire.core.secrets`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
from scorewire.core.secrets import scrub
from scorewire.generation.accounts import (
    Account,
    AttemptFailed,
    Failure,
    SdkClients,
    own_account,
)
from scorewire.judge.backends.base import (
    dropped,
    is_retryable_status,
    mentions,
    parse_retry_after,
    safe_error_detail,
)
from scorewire.judge.routing import GEMINI_BASE_URL as JUDGE_GEMINI_BASE_URL

GENERATION_ERROR = "GENERATION_ERROR"
"""Score error code: the output could not be generated (provider or HTTP target failed)."""

BACKENDS = ("openai", "anthropic", "gemini", "echo")
"""Provider backends, as written before the colon."""

GEMINI_BASE_URL = JUDGE_GEMINI_BASE_URL
"""Gemini's OpenAI-compatible endpoint, used unless a base URL is configured."""

ANTHROPIC_MAX_TOKENS = 1024
"""`max_tokens` sent to Anthropic, which requires one."""

BUDGETED_MAX_TOKENS = 1024
"""Completion limit sent with every budgeted provider call (its ceiling is priced on it)."""


@dataclass(frozen=True, slots=True)
class ProviderRef:
    """A provider as written: `openai:gpt-4o`, `anthropic:claude-sonnet-4-6`, `echo`."""

    backend: str
    model: str

    @property
    def id(self) -> str:
        """The provider's name in sample ids and results (`openai:gpt-4o`, `echo`)."""
        return f"{self.backend}:{self.model}" if self.model else self.backend

    def __str__(self) -> str:
        return self.id


def parse_provider(text: str) -> ProviderRef:
    """Parse `backend:model`; raise ValueError with a message for people when unusable.

    Everything after the first colon is the model, so `openai:llama3:8b` works.
    """
    name = text.strip()
    backend, _, model = name.partition(":")
    backend = backend.strip().lower()
    model = model.strip()
    if backend not in BACKENDS:
        raise ValueError(
            f"unknown provider backend {backend!r}; write one of "
            + ", ".join(f"'{b}:<model>'" for b in BACKENDS[:3])
            + " or 'echo'"
        )
    if not model and backend != "echo":
        raise ValueError(f"no model after {backend!r}: write '{backend}:<model>'")
    return ProviderRef(backend, model)


@dataclass(frozen=True, slots=True)
class Generated:
    """One provider answer."""

    text: str
    """The answer's text."""
    input_tokens: int | None = None
    """Prompt tokens billed, or None when the server did not say."""
    output_tokens: int | None = None
    """Completion tokens billed, or None when the server did not say."""


class ProviderError(Exception):
    """A provider call that produced no output; the message is safe to show (scrubbed)."""

    def __init__(self, message: str) -> None:
        message = scrub(message)
        super().__init__(message)
        self.message = message


class Provider(Protocol):
    """A model that answers a prompt."""

    ref: ProviderRef
    """Which provider this is."""

    async def generate(
        self, prompt: str, *, timeout_s: float, max_tokens: int | None = None
    ) -> Generated:
        """Answer `prompt` in at most `max_tokens` completion tokens (None: the provider's
        default); raise ProviderError when there is no answer."""
        ...

    async def aclose(self) -> None:
        """Close the HTTP client."""
        ...


class EchoProvider:
    """Returns the rendered prompt itself: for offline runs and tests. Costs nothing."""

    def __init__(self, ref: ProviderRef | None = None) -> None:
        self.ref = ref or ProviderRef("echo", "")

    async def generate(
        self, prompt: str, *, timeout_s: float, max_tokens: int | None = None
    ) -> Generated:
        """The prompt, unchanged."""
        return Generated(prompt, 0, 0)

    async def aclose(self) -> None:
        """Nothing to close."""


def _status_message(ref: ProviderRef, status: int, body: object) -> str:
    if isinstance(body, Mapping) and isinstance(body.get("error"), Mapping):
        body = body["error"]
    detail = safe_error_detail(body)
    return f"the {ref.id} provider answered HTTP {status}" + (f" ({detail})" if detail else "")


def _sdk_failure(ref: ProviderRef, err: Exception, sdk: Any) -> AttemptFailed:
    """An SDK's exception (`sdk`: the `openai` or `anthropic` module) as the failure of
    an attempt, worded for people: a 429 is rate limited (retried beyond
    `max_retries`), a 5xx, 408, 409, timeout or dropped connection worth retrying."""
    if isinstance(err, sdk.APIStatusError):
        status = err.status_code
        return AttemptFailed(
            Failure(
                _status_message(ref, status, err.body),
                retry=is_retryable_status(status),
                rate_limited=status == 429,
                retry_after=parse_retry_after(err.response.headers),
            )
        )
    if isinstance(err, sdk.APITimeoutError) and not dropped(err):
        return AttemptFailed(Failure(f"the {ref.id} provider timed out", retry=True))
    if isinstance(err, sdk.APIConnectionError):
        return AttemptFailed(Failure(f"could not reach the {ref.id} provider", retry=True))
    return AttemptFailed(Failure(f"the {ref.id} provider sent a malformed response"))


class _AccountProvider:
    """A provider whose calls go through its account (`generation.accounts`): each
    attempt is `_attempt(prompt, timeout, max_tokens)`, retried and paced by the account."""

    BACKEND = ""
    """The SDK its account is made with (`openai` or `anthropic`)."""

    def __init__(
        self,
        ref: ProviderRef,
        *,
        api_key: str,
        base_url: str | None,
        max_retries: int = 2,
        clients: SdkClients | None = None,
    ) -> None:
        """`clients`: the server's shared accounts (None: an account of its own, its
        client closed with the provider)."""
        self.ref = ref
        self._own = clients is None
        self._account: Account = (
            own_account(self.BACKEND, api_key, base_url, max_retries)
            if clients is None
            else clients.get(self.BACKEND, api_key, base_url, max_retries)
        )

    async def _attempt(self, prompt: str, timeout_s: float, max_tokens: int | None) -> Generated:
        raise NotImplementedError

    async def generate(
        self, prompt: str, *, timeout_s: float, max_tokens: int | None = None
    ) -> Generated:
        """The prompt as one user turn, answered (ProviderError when it is not)."""
        try:
            return await self._account.call(
                lambda left: self._attempt(prompt, left, max_tokens), timeout_s
            )
        except AttemptFailed as err:
            raise ProviderError(err.failure.message) from None

    async def aclose(self) -> None:
        """Close the SDK's HTTP client, unless it is the server's to share."""
        if self._own:
            await self._account.client.close()


class OpenAIChatProvider(_AccountProvider):
    """Chat completions on OpenAI or any OpenAI-compatible endpoint (Gemini's included).

    The request goes through the SDK client's `post` (auth, headers, timeouts and errors
    are the SDK's) with the body already encoded, and the answer is read from its JSON,
    as the judge's OpenAI backend does: `chat.completions.create`'s transform of its typed
    parameters and its model construction were most of the CPU of a call.
    """

    BACKEND = "openai"
    _limit_param = "max_tokens"
    """The token limit's parameter name; `max_completion_tokens` once the endpoint has
    refused `max_tokens` (set on the provider, for its next calls)."""

    async def _attempt(self, prompt: str, timeout_s: float, max_tokens: int | None) -> Generated:
        import openai

        while True:
            used = self._limit_param
            body: dict[str, Any] = {
                "model": self.ref.model,
                "messages": [{"role": "user", "content": prompt}],
            }
            if max_tokens is not None:
                body[used] = max_tokens
            try:
                resp = await self._account.client.post(
                    "/chat/completions",
                    content=orjson.dumps(body),
                    cast_to=object,  # the JSON as it is: three fields are read
                    options={"timeout": timeout_s},
                )
            except openai.APIStatusError as err:
                if max_tokens is not None and self._fall_back(err, used):
                    continue
                raise _sdk_failure(self.ref, err, openai) from None
            except (openai.OpenAIError, ValueError) as err:
                raise _sdk_failure(self.ref, err, openai) from None
            return _chat_answer(self.ref, resp)

    def _fall_back(self, err: Any, used: str) -> bool:
        """Switch to `max_completion_tokens` when the server refused `max_tokens`."""
        if err.status_code not in (400, 422):
            return False
        if used != self._limit_param:
            return True  # a concurrent call already switched
        if used == "max_tokens" and mentions(err.body, "max_tokens"):
            self._limit_param = "max_completion_tokens"
            return True
        return False


def _chat_answer(ref: ProviderRef, resp: Any) -> Generated:
    """A chat completion's JSON read: its first choice's text and the tokens billed. A
    refusal or an answer of no choice is final, not worth another attempt."""
    if not isinstance(resp, dict):
        raise AttemptFailed(Failure(f"the {ref.id} provider sent a malformed response"))
    choices = resp.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise AttemptFailed(Failure(f"the {ref.id} provider refused or gave no answer"))
    content, refusal = message.get("content"), message.get("refusal")
    if content is None and refusal:
        raise AttemptFailed(Failure(f"the {ref.id} provider refused or gave no answer"))
    if content is not None and not isinstance(content, str):
        raise AttemptFailed(Failure(f"the {ref.id} provider sent a malformed response"))
    usage = resp.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    in_tok, out_tok = usage.get("prompt_tokens"), usage.get("completion_tokens")
    return Generated(
        content or "",
        in_tok if isinstance(in_tok, int) else None,
        out_tok if isinstance(out_tok, int) else None,
    )


class AnthropicProvider(_AccountProvider):
    """Anthropic's Messages API (no sampling parameters: the SDK's API version refuses them)."""

    BACKEND = "anthropic"

    async def _attempt(self, prompt: str, timeout_s: float, max_tokens: int | None) -> Generated:
        import anthropic

        try:
            resp = await self._account.client.messages.create(
                model=self.ref.model,
                max_tokens=ANTHROPIC_MAX_TOKENS if max_tokens is None else max_tokens,
                messages=[{"role": "user", "content": prompt}],
                timeout=timeout_s,
            )
        except (anthropic.AnthropicError, ValueError) as err:
            raise _sdk_failure(self.ref, err, anthropic) from None
        if getattr(resp, "stop_reason", None) == "refusal":
            raise AttemptFailed(Failure(f"the {self.ref.id} provider refused to answer"))
        text = "".join(
            getattr(block, "text", "")
            for block in (resp.content or [])
            if getattr(block, "type", None) == "text"
        )
        usage = resp.usage
        return Generated(text, usage.input_tokens, usage.output_tokens)


@dataclass(frozen=True, slots=True)
class ProviderCredentials:
    """Keys and base URLs of the provider backends (never logged)."""

    openai_api_key: str | None = None
    openai_base_url: str | None = None
    anthropic_api_key: str | None = None
    anthropic_base_url: str | None = None
    gemini_api_key: str | None = None
    gemini_base_url: str | None = None

    @classmethod
    def from_settings(
        cls, settings: Any, environ: Mapping[str, str] | None = None
    ) -> ProviderCredentials:
        """Read the judge's settings (the same keys and URLs), falling back to the SDKs'
        environment variables; Gemini from `SCOREWIRE_GEMINI_*` or `GEMINI_*`."""
        env = os.environ if environ is None else environ

        def secret(name: str, *env_names: str) -> str | None:
            value: Any = getattr(settings, name, None)
            raw = value.get_secret_value() if hasattr(value, "get_secret_value") else value
            if isinstance(raw, str) and raw:
                return raw
            return next((env[n] for n in env_names if env.get(n)), None)

        return cls(
            openai_api_key=secret("openai_api_key", "OPENAI_API_KEY"),
            openai_base_url=secret("openai_base_url", "OPENAI_BASE_URL"),
            anthropic_api_key=secret("anthropic_api_key", "ANTHROPIC_API_KEY"),
            anthropic_base_url=secret("anthropic_base_url", "ANTHROPIC_BASE_URL"),
            gemini_api_key=secret(
                "gemini_api_key", "SCOREWIRE_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"
            ),
            gemini_base_url=secret(
                "gemini_base_url", "SCOREWIRE_GEMINI_BASE_URL", "GEMINI_BASE_URL"
            ),
        )


def provider_problem(ref: ProviderRef, creds: ProviderCredentials) -> tuple[str, str] | None:
    """(setting, message) when `ref`'s backend has no credentials here, else None."""
    if ref.backend == "openai" and not (creds.openai_api_key or creds.openai_base_url):
        return (
            "SCOREWIRE_OPENAI_API_KEY",
            f"the openai provider {ref.id} has no credentials: set SCOREWIRE_OPENAI_API_KEY "
            "(or OPENAI_API_KEY), or SCOREWIRE_OPENAI_BASE_URL for a local OpenAI-compatible "
            "server",
        )
    if ref.backend == "gemini" and not (creds.gemini_api_key or creds.gemini_base_url):
        return (
            "SCOREWIRE_GEMINI_API_KEY",
            f"the gemini provider {ref.id} has no credentials: set SCOREWIRE_GEMINI_API_KEY "
            "(or GEMINI_API_KEY)",
        )
    if ref.backend == "anthropic" and not creds.anthropic_api_key:
        return (
            "SCOREWIRE_ANTHROPIC_API_KEY",
            f"the anthropic provider {ref.id} has no credentials: set "
            "SCOREWIRE_ANTHROPIC_API_KEY (or ANTHROPIC_API_KEY)",
        )
    return None


def build_provider(
    ref: ProviderRef,
    creds: ProviderCredentials,
    *,
    max_retries: int = 2,
    clients: SdkClients | None = None,
) -> Provider:
    """The client for `ref`; ValueError (for people) when its backend has no credentials.

    `max_retries`: the SDK's retries of a 429, a 5xx or a dropped connection, with backoff;
    `clients`: the server's shared SDK clients (None: the provider's own).
    """
    if ref.backend == "echo":
        return EchoProvider(ref)
    problem = provider_problem(ref, creds)
    if problem is not None:
        raise ValueError(problem[1])
    if ref.backend == "openai":
        # Local servers need no key, but the SDK insists on one.
        return OpenAIChatProvider(
            ref,
            api_key=creds.openai_api_key or "unused",
            base_url=creds.openai_base_url,
            max_retries=max_retries,
            clients=clients,
        )
    if ref.backend == "gemini":
        return OpenAIChatProvider(
            ref,
            api_key=creds.gemini_api_key or "unused",
            base_url=creds.gemini_base_url or GEMINI_BASE_URL,
            max_retries=max_retries,
            clients=clients,
        )
    assert creds.anthropic_api_key is not None
    return AnthropicProvider(
        ref,
        api_key=creds.anthropic_api_key,
        base_url=creds.anthropic_base_url,
        max_retries=max_retries,
        clients=clients,
    )


def elapsed_ms(start: float) -> float:
    """Milliseconds since `start` (a `time.perf_counter()` value)."""
    return (time.perf_counter() - start) * 1000.0
