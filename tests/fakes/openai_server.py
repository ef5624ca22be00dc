"""A stand-in for OpenAI's chat-completions API (`POST /v1/chat/completions`).

Speaks the real wire format: the `openai` SDK is pointed at `server.url`. Error bodies
are `{"error": {"message", "type", "param", "code"}}`; a refusal is a message with
`content: null` and `refusal` set; `reject_json_schema` makes it answer 400 to a
`response_format` of type `json_schema`, like servers without structured outputs, and
`reject_json_object` likewise for `json_object`.

Run as a process for benchmarks: `python -m tests.fakes.openai_server --latency-ms 50`.
"""

from __future__ import annotations

import time
from typing import Any

from tests.fakes.base import FakeLLMServer, Reply, serve_main

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "permission_denied",
    404: "not_found_error",
    429: "rate_limit_exceeded",
}


class FakeOpenAI(FakeLLMServer):
    """OpenAI-compatible `/v1/chat/completions` with scripted replies."""

    protocol = "openai"

    def __init__(
        self,
        *,
        default: Reply | None = None,
        api_key: str | None = None,
        reject_json_schema: bool = False,
        reject_json_object: bool = False,
    ) -> None:
        super().__init__(default=default, api_key=api_key)
        self.reject_json_schema = reject_json_schema
        self.reject_json_object = reject_json_object

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def completion_path(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/chat/completions"

    def authorised(self, headers: dict[str, str]) -> bool:
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def invalid_request(self, body: Any) -> tuple[int, dict[str, Any]] | None:
        if not isinstance(body, dict) or "model" not in body or "messages" not in body:
            return 400, self.error_body(400, "model and messages are required")
        fmt = (body.get("response_format") or {}).get("type")
        if (fmt == "json_schema" and self.reject_json_schema) or (
            fmt == "json_object" and self.reject_json_object
        ):
            err = self.error_body(
                400, f"Invalid parameter: 'response_format' of type '{fmt}' is not supported."
            )
            err["error"]["param"] = "response_format"
            return 400, err
        return None

    def success_body(self, body: Any, reply: Reply, n: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model if reply.model is not None else body.get("model", ""),
            "choices": [
                {
                    "index": 0,
                    "message": {
                        "role": "assistant",
                        "content": None if reply.refusal else reply.content,
                        "refusal": reply.refusal,
                    },
                    "finish_reason": reply.finish or "stop",
                    "logprobs": None,
                }
            ],
        }
        if reply.input_tokens is not None and reply.output_tokens is not None:
            out["usage"] = {
                "prompt_tokens": reply.input_tokens,
                "completion_tokens": reply.output_tokens,
                "total_tokens": reply.input_tokens + reply.output_tokens,
            }
        return out

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "error": {
                "message": message,
                "type": _ERROR_TYPES.get(status, "server_error"),
                "param": None,
                "code": "invalid_api_key" if status == 401 else None,
            }
        }


if __name__ == "__main__":
    serve_main(lambda reply: FakeOpenAI(default=reply))
