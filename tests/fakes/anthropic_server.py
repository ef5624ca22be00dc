"""A stand-in for Anthropic's Messages API (`POST /v1/messages`).

Speaks the wire format of API version 2026-10-21 (what the `anthropic` 2.x SDK sends):
error bodies are `{"type": "error", "error": {"type", "message"}}`; `temperature`,
`top_p` and `top_k` are rejected with 400 like the real API; a refusal is
`stop_reason: "refusal"`; the key may come as `x-api-key` or `Authorization: Bearer`.

Run as a process: `python -m tests.fakes.anthropic_server --latency-ms 50`.
"""

from __future__ import annotations

from typing import Any

from tests.fakes.base import FakeLLMServer, Reply, serve_main

_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    529: "overloaded_error",
}


class FakeAnthropic(FakeLLMServer):
    """Anthropic `/v1/messages` with scripted replies."""

    protocol = "anthropic"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def completion_path(self, path: str) -> bool:
        return path.rstrip("/") == "/v1/messages"

    def authorised(self, headers: dict[str, str]) -> bool:
        return self.api_key in (
            headers.get("x-api-key"),
            headers.get("authorization", "").removeprefix("Bearer "),
        )

    def invalid_request(self, body: Any) -> tuple[int, dict[str, Any]] | None:
        if not isinstance(body, dict):
            return 400, self.error_body(400, "the body must be a JSON object")
        for key in ("model", "messages", "max_tokens"):
            if key not in body:
                return 400, self.error_body(400, f"{key}: Field required")
        for key in ("temperature", "top_p", "top_k"):
            if key in body:
                return 400, self.error_body(400, f"{key}: Extra inputs are not permitted")
        return None

    def success_body(self, body: Any, reply: Reply, n: int) -> dict[str, Any]:
        text = reply.refusal if reply.refusal is not None else (reply.content or "")
        out: dict[str, Any] = {
            "id": f"msg_{n:08d}",
            "type": "message",
            "role": "assistant",
            "model": reply.model if reply.model is not None else body.get("model", ""),
            "content": [{"type": "text", "text": text}] if text else [],
            "stop_reason": "refusal" if reply.refusal is not None else (reply.finish or "end_turn"),
            "stop_sequence": None,
        }
        if reply.input_tokens is not None and reply.output_tokens is not None:
            out["usage"] = {
                "input_tokens": reply.input_tokens,
                "output_tokens": reply.output_tokens,
            }
        return out

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        return {
            "type": "error",
            "error": {"type": _ERROR_TYPES.get(status, "api_error"), "message": message},
        }


if __name__ == "__main__":
    serve_main(lambda reply: FakeAnthropic(default=reply))
