"""Anthropic's Messages API through the official `anthropic` SDK.

The prompt asks for a single JSON object; the answer is the concatenated text blocks.
A `refusal` stop reason is reported as a refusal, `max_tokens` as a truncated answer.

No temperature is sent: the SDK (2.x) speaks API version 2026-10-21, which removed the
sampling parameters (temperature, top_p, top_k) and answers 400 to any of them, even
at their defaults. The configured temperature still goes into the cache key.
"""

from __future__ import annotations

import logging
from typing import Any

import anthropic
from scorewire.core.sdk_urls import unset_empty_sdk_urls
from scorewire.core.secrets import register
from scorewire.judge.backends.base import (
    BackendError,
    Completion,
    dropped,
    http_limits,
    reported_model,
    status_error,
)
from scorewire.judge.prompts import Prompt

log = logging.getLogger(__name__)


class AnthropicBackend:
    """A judge backend for the Anthropic Messages API."""

    name = "anthropic"

    def __init__(self, *, api_key: str, base_url: str | None = None, connections: int = 32) -> None:
        """`connections`: the most HTTP connections open at once (the judge concurrency)."""
        register(api_key)
        # max_retries=0: retries are ours. The credential is passed explicitly so the SDK
        # never goes looking for profiles or other credentials on its own. HTTP goes
        # through the SDK's aiohttp transport (`backends.base.http_limits`).
        unset_empty_sdk_urls()  # an empty OPENAI_BASE_URL & co. mean the default
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            http_client=anthropic.DefaultAioHttpClient(limits=http_limits(connections)),
        )

    async def complete(
        self,
        prompt: Prompt,
        *,
        model: str,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        """Make one request."""
        try:
            resp = await self._client.messages.create(
                model=model,
                max_tokens=max_tokens,
                system=prompt.system,
                messages=[{"role": "user", "content": prompt.user}],
                timeout=timeout_s,
            )
        except anthropic.APIStatusError as err:
            raise status_error(self.name, err.status_code, err.body, err.response.headers) from None
        except anthropic.APITimeoutError as err:
            if dropped(err):
                raise BackendError(
                    f"could not reach the {self.name} judge", retryable=True
                ) from None
            raise BackendError(f"the {self.name} judge timed out", retryable=True) from None
        except anthropic.APIConnectionError:
            raise BackendError(f"could not reach the {self.name} judge", retryable=True) from None
        except (anthropic.AnthropicError, ValueError) as err:
            log.warning("anthropic judge: unreadable response (%s)", type(err).__name__)
            raise BackendError(
                f"the {self.name} judge sent a malformed response", retryable=False
            ) from None
        return _completion(resp)

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()


def _completion(resp: Any) -> Completion:
    usage = getattr(resp, "usage", None)
    in_tok = getattr(usage, "input_tokens", None) if usage is not None else None
    out_tok = getattr(usage, "output_tokens", None) if usage is not None else None
    text = "".join(
        getattr(block, "text", "")
        for block in (getattr(resp, "content", None) or [])
        if getattr(block, "type", None) == "text"
    )
    stop = getattr(resp, "stop_reason", None)
    model = reported_model(getattr(resp, "model", None))
    if stop == "refusal":
        return Completion("", in_tok, out_tok, refusal=text or "the model refused", model=model)
    return Completion(text, in_tok, out_tok, truncated=stop == "max_tokens", model=model)
