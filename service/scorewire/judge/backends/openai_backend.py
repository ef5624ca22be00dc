"""OpenAI-compatible chat completions through the official `openai` SDK.

Serves OpenAI itself and every server speaking its protocol (vLLM, Ollama, llama.cpp's
server, Gemini's OpenAI-compatible endpoint) through a configurable base URL.

The verdict is requested with `response_format` of type `json_schema`. A server that
rejects it gets `json_object` instead, and one that rejects that too gets no
`response_format` (the prompt still asks for JSON). Likewise a server that refuses
`max_tokens` (OpenAI's reasoning models) gets `max_completion_tokens`. Each fallback is
remembered for the life of the backend, so it is probed once, not per call.

The request goes through the SDK client's `post` to `/chat/completions` (auth, headers,
timeouts and error mapping all the SDK's) rather than through `chat.completions.create`,
and the answer is read from its JSON rather than built into a `ChatCompletion` model:
our body is already plain JSON and we read four fields, while `create`'s recursive
transform of its typed parameters and the model construction were about 45 % of the
client's CPU per judge call in `bench/judge_bench.py`. The body is handed to the SDK
already encoded (orjson, as `content`: the SDK sends it as it is, with its JSON content
type), which spares its deep copy
of the options and its JSON encoder.

HTTP goes through the SDK's aiohttp transport (`openai.DefaultAioHttpClient`, see
`backends.base.http_client`) rather than its default httpx one.
"""

from __future__ import annotations

import logging
from typing import Any

import openai
import orjson
from scorewire.core.sdk_urls import unset_empty_sdk_urls
from scorewire.core.secrets import register
from scorewire.judge.backends.base import (
    BackendError,
    Completion,
    dropped,
    http_limits,
    mentions,
    reported_model,
    status_error,
)
from scorewire.judge.prompts import Prompt

log = logging.getLogger(__name__)

_FORMATS = ("json_schema", "json_object", "none")


class OpenAIBackend:
    """A judge backend for any OpenAI-compatible `/chat/completions` endpoint."""

    name = "openai"
    """`openai`, or what the endpoint is (`gemini`): every error and metric names it."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None = None,
        name: str = "openai",
        connections: int = 32,
    ) -> None:
        """`connections`: the most HTTP connections open at once (the judge concurrency)."""
        register(api_key)
        self.name = name
        # max_retries=0: retries are ours (with Retry-After and the request deadline);
        # the SDK's would multiply them.
        unset_empty_sdk_urls()  # an empty OPENAI_BASE_URL & co. mean the default
        self._client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            http_client=openai.DefaultAioHttpClient(limits=http_limits(connections)),
        )
        self._format = 0
        self._max_tokens_param = "max_tokens"

    def _response_format(self, prompt: Prompt) -> dict[str, Any] | None:
        mode = _FORMATS[self._format]
        if mode == "json_schema":
            return {
                "type": "json_schema",
                "json_schema": {
                    "name": prompt.schema_name,
                    "strict": True,
                    "schema": prompt.schema,
                },
            }
        if mode == "json_object":
            return {"type": "json_object"}
        return None

    async def complete(
        self,
        prompt: Prompt,
        *,
        model: str,
        max_tokens: int,
        temperature: float,
        timeout_s: float,
    ) -> Completion:
        """Make one request (plus at most one per feature fallback)."""
        while True:
            used = (self._format, self._max_tokens_param)
            body: dict[str, Any] = {
                "model": model,
                "messages": [
                    {"role": "system", "content": prompt.system},
                    {"role": "user", "content": prompt.user},
                ],
                "temperature": temperature,
                self._max_tokens_param: max_tokens,
            }
            fmt = self._response_format(prompt)
            if fmt is not None:
                body["response_format"] = fmt
            try:
                resp = await self._client.post(
                    "/chat/completions",
                    # Bytes go out as they are. Every number here is bounded at load
                    # (orjson would write a NaN as null where the SDK's encoder refuses it).
                    content=orjson.dumps(body),
                    cast_to=object,  # the JSON as is: only four fields are read
                    options={"timeout": timeout_s},
                )
            except openai.APIStatusError as err:
                if self._fall_back(err, used):
                    continue
                raise status_error(
                    self.name, err.status_code, err.body, err.response.headers
                ) from None
            except openai.APITimeoutError as err:
                if dropped(err):
                    raise BackendError(
                        f"could not reach the {self.name} judge", retryable=True
                    ) from None
                raise BackendError(f"the {self.name} judge timed out", retryable=True) from None
            except openai.APIConnectionError:
                raise BackendError(
                    f"could not reach the {self.name} judge", retryable=True
                ) from None
            except openai.OpenAIError as err:
                log.warning("%s judge: unreadable response (%s)", self.name, type(err).__name__)
                raise BackendError(
                    f"the {self.name} judge sent a malformed response", retryable=False
                ) from None
            except ValueError as err:  # a body that is not JSON
                log.warning("%s judge: unreadable response (%s)", self.name, type(err).__name__)
                raise BackendError(
                    f"the {self.name} judge sent a malformed response", retryable=False
                ) from None
            return _completion(resp, self.name)

    def _fall_back(self, err: openai.APIStatusError, used: tuple[int, str]) -> bool:
        """Downgrade a feature the server rejected; True when the request should be resent."""
        if err.status_code not in (400, 422):
            return False
        if used != (self._format, self._max_tokens_param):
            return True  # a concurrent call already downgraded: resend with the new settings
        if self._format < len(_FORMATS) - 1 and mentions(
            err.body, "response_format", "json_schema", "json_object"
        ):
            self._format += 1
            log.info(
                "%s judge: server rejected a response_format; now %s",
                self.name,
                _FORMATS[self._format],
            )
            return True
        if self._max_tokens_param == "max_tokens" and mentions(err.body, "max_tokens"):
            self._max_tokens_param = "max_completion_tokens"
            log.info("%s judge: server rejected max_tokens; now max_completion_tokens", self.name)
            return True
        return False

    async def aclose(self) -> None:
        """Close the SDK's HTTP client."""
        await self._client.close()


def _completion(resp: Any, name: str = "openai") -> Completion:
    """Read a chat-completion JSON body; anything unexpected is a malformed response."""
    if not isinstance(resp, dict):
        raise BackendError(f"the {name} judge sent a malformed response", retryable=False)
    usage = resp.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    in_tok = usage.get("prompt_tokens")
    out_tok = usage.get("completion_tokens")
    in_tok = in_tok if isinstance(in_tok, int) else None
    out_tok = out_tok if isinstance(out_tok, int) else None
    choices = resp.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return Completion("", in_tok, out_tok, model=reported_model(resp.get("model")))
    choice = choices[0]
    message = choice.get("message")
    message = message if isinstance(message, dict) else {}
    content = message.get("content")
    refusal = message.get("refusal")
    return Completion(
        text=content if isinstance(content, str) else "",
        input_tokens=in_tok,
        output_tokens=out_tok,
        refusal=refusal if isinstance(refusal, str) and refusal else None,
        truncated=choice.get("finish_reason") == "length",
        model=reported_model(resp.get("model")),
    )
