"""A scripted HTTP stand-in for an LLM API: real HTTP on 127.0.0.1, an ephemeral port.

Runs a minimal asyncio HTTP/1.1 server (keep-alive, Content-Length bodies) on its own
event loop in a background thread, so the real SDKs talk to it exactly as to the real
service, and tests or benchmarks in the same process are not slowed by a
thread-per-connection server fighting over the GIL. Each request takes the next
scripted `Reply` from the queue, else the `responder`'s, else `default`. A reply can
set the status, the answer's text, token usage, latency, headers (Retry-After), a
refusal, a malformed body, or make the server hang until it stops.

Protocol subclasses (`openai_server`, `anthropic_server`) render replies in their wire
format and validate requests like the real API does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any


@dataclass
class Reply:
    """One scripted answer."""

    content: str | None = '{"reasoning": "meets the rubric", "score": 4}'
    """The assistant's text (the verdict)."""
    status: int = 200
    """HTTP status; >= 400 sends the protocol's error body."""
    input_tokens: int | None = 100
    """Prompt tokens reported (None: no usage in the response)."""
    output_tokens: int | None = 20
    """Completion tokens reported."""
    delay_s: float = 0.0
    """Seconds to wait before answering."""
    headers: dict[str, str] = field(default_factory=dict)
    """Extra response headers (e.g. Retry-After)."""
    hang: bool = False
    """Never answer (until the server stops): a timeout for the client."""
    refusal: str | None = None
    """Answer with a refusal instead of content."""
    raw_body: str | None = None
    """Send this body verbatim with status 200 (malformed JSON)."""
    finish: str | None = None
    """Override the finish/stop reason (`length` / `max_tokens` for a cut-off answer)."""
    model: str | None = None
    """The model the response says answered; None echoes the request's."""
    error_message: str = "scripted failure"
    """The message in an error body."""
    error_fields: dict[str, Any] = field(default_factory=dict)
    """Fields set in the error object of an error body (`code`, `type`: what a hostile or
    broken upstream may fill with anything)."""


@dataclass(frozen=True)
class Recorded:
    """A request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: Any
    at: float


class FakeLLMServer:
    """Base of the protocol stand-ins; see the module docstring."""

    protocol = "base"

    def __init__(self, *, default: Reply | None = None, api_key: str | None = None) -> None:
        self.default = default or Reply()
        """Reply used when the queue is empty and there is no responder."""
        self.responder: Callable[[Any], Reply] | None = None
        """Called with the request body when the queue is empty."""
        self.api_key = api_key
        """When set, requests without this key get a 401 (whose message echoes the key)."""
        self.requests: list[Recorded] = []
        """Every completion request received, in order."""
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._released = asyncio.Event()
        self._writers: set[asyncio.StreamWriter] = set()
        self._thread: threading.Thread | None = None
        self.in_flight = 0
        """Requests being answered right now."""
        self.max_in_flight = 0
        """Most requests answered at once so far."""
        self.limit_in_flight: int | None = None
        """When set, a request arriving while this many are being answered gets a 429
        (a provider's rate limit, as calls at once) and is not recorded."""
        self.limit_retry_after_s = 0.1
        """The Retry-After a 429 of `limit_in_flight` carries."""
        self.rate_limited = 0
        """Requests refused by `limit_in_flight`."""

    # --- scripting ------------------------------------------------------------------

    def script(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order."""
        with self._lock:
            self._queue.extend(replies)

    @property
    def calls(self) -> int:
        """Completion requests received so far."""
        with self._lock:
            return len(self.requests)

    def reset(self) -> None:
        """Forget recorded requests and scripted replies."""
        with self._lock:
            self.requests.clear()
            self._queue.clear()
            self.max_in_flight = 0

    def _next_reply(self, body: Any) -> Reply:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(body)
        return self.default

    # --- protocol hooks -------------------------------------------------------------

    def completion_path(self, path: str) -> bool:
        """Whether `path` is the protocol's completion endpoint."""
        raise NotImplementedError

    def authorised(self, headers: dict[str, str]) -> bool:
        """Whether the request carries `api_key`."""
        raise NotImplementedError

    def invalid_request(self, body: Any) -> tuple[int, dict[str, Any]] | None:
        """A (status, error body) for a request the real API would reject, or None."""
        return None

    def success_body(self, body: Any, reply: Reply, n: int) -> dict[str, Any]:
        """The protocol's answer for a successful reply."""
        raise NotImplementedError

    def error_body(self, status: int, message: str) -> dict[str, Any]:
        """The protocol's error body."""
        raise NotImplementedError

    # --- HTTP -----------------------------------------------------------------------

    def _respond(
        self, path: str, headers: dict[str, str], raw: bytes
    ) -> tuple[int, dict[str, str], bytes, Reply | None]:
        if path == "/_stats":
            stats = {
                "calls": self.calls,
                "max_in_flight": self.max_in_flight,
                "rate_limited": self.rate_limited,
            }
            return 200, {}, json.dumps(stats).encode(), None
        if not self.completion_path(path):
            return 404, {}, json.dumps(self.error_body(404, f"no route {path}")).encode(), None
        try:
            body = json.loads(raw or b"null")
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(Recorded(path, headers, body, time.monotonic()))
            n = len(self.requests)
        if self.api_key is not None and not self.authorised(headers):
            presented = headers.get("x-api-key") or headers.get("authorization", "")
            # Real APIs echo (part of) a wrong key in the message; so does this one, in
            # full, so tests can prove scorewire never repeats an error body.
            msg = f"Incorrect API key provided: {presented}"
            return 401, {}, json.dumps(self.error_body(401, msg)).encode(), None
        rejected = self.invalid_request(body)
        if rejected is not None:
            return rejected[0], {}, json.dumps(rejected[1]).encode(), None
        reply = self._next_reply(body)
        if reply.raw_body is not None:
            return 200, dict(reply.headers), reply.raw_body.encode(), reply
        if reply.status >= 400:
            out = self.error_body(reply.status, reply.error_message)
            if reply.error_fields and isinstance(out.get("error"), dict):
                out["error"].update(reply.error_fields)
        else:
            out = self.success_body(body, reply, n)
        return reply.status, dict(reply.headers), json.dumps(out).encode(), reply

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one keep-alive connection: a minimal HTTP/1.1 request loop."""
        self._writers.add(writer)
        try:
            while True:
                line = await reader.readline()
                if not line.strip():
                    return
                _method, target, _version = line.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while True:
                    h = await reader.readline()
                    if h in (b"\r\n", b"\n", b""):
                        break
                    k, _, v = h.decode("latin-1").partition(":")
                    headers[k.strip().lower()] = v.strip()
                length = int(headers.get("content-length") or 0)
                raw = await reader.readexactly(length) if length else b""
                if self.completion_path(target) and self._over_limit():
                    body = self.error_body(429, "Rate limit reached for requests")
                    after = f"{self.limit_retry_after_s:g}"
                    self._write(writer, 429, {"retry-after": after}, json.dumps(body).encode())
                    await writer.drain()
                    continue
                status, extra, payload, reply = self._respond(target, headers, raw)
                self._enter()
                try:
                    if reply is not None and reply.hang:
                        await self._released.wait()
                        return  # drop the connection without an answer
                    if reply is not None and reply.delay_s:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._released.wait(), reply.delay_s)
                    self._write(writer, status, extra, payload)
                    await writer.drain()
                finally:
                    self._leave()
                if headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            return
        finally:
            self._writers.discard(writer)
            writer.close()

    @staticmethod
    def _write(
        writer: asyncio.StreamWriter, status: int, extra: dict[str, str], payload: bytes
    ) -> None:
        head = [f"HTTP/1.1 {status} {HTTPStatus(status).phrase}"]
        head.append("content-type: application/json")
        head.append(f"content-length: {len(payload)}")
        head.extend(f"{k}: {v}" for k, v in extra.items())
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)

    def _over_limit(self) -> bool:
        with self._lock:
            if self.limit_in_flight is None or self.in_flight < self.limit_in_flight:
                return False
            self.rate_limited += 1
            return True

    def _enter(self) -> None:
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def _serve(self, started: threading.Event) -> None:
        loop = asyncio.new_event_loop()
        self._loop = loop
        self._released = asyncio.Event()

        async def boot() -> None:
            self._server = await asyncio.start_server(self._connection, "127.0.0.1", 0, backlog=512)

        loop.run_until_complete(boot())
        started.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self._shutdown())
            loop.close()

    async def _shutdown(self) -> None:
        self._released.set()
        if self._server is not None:
            self._server.close()
        for w in list(self._writers):
            w.close()
        await asyncio.sleep(0)

    def start(self) -> FakeLLMServer:
        """Listen on 127.0.0.1 at a free port and serve from a background thread."""
        started = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(started,), name=f"fake-{self.protocol}", daemon=True
        )
        self._thread.start()
        started.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving; hanging requests are released (their connections dropped)."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None
        self._loop = None
        self._server = None

    @property
    def port(self) -> int:
        """The port it listens on."""
        assert self._server is not None, "the server is not started"
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def url(self) -> str:
        """The base URL the SDK is given."""
        raise NotImplementedError

    @contextmanager
    def running(self) -> Iterator[FakeLLMServer]:
        """Start, yield, stop."""
        self.start()
        try:
            yield self
        finally:
            self.stop()


def serve_main(factory: Callable[[Reply], FakeLLMServer], argv: list[str] | None = None) -> None:
    """Run a stand-in as a process: prints `PORT <n>` and serves until stdin closes.

    Used by the benchmark so that the server's work does not share the client's CPU time.
    """
    parser = argparse.ArgumentParser(description="scripted LLM API stand-in")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--content", default=Reply().content)
    parser.add_argument("--input-tokens", type=int, default=100)
    parser.add_argument("--output-tokens", type=int, default=20)
    parser.add_argument(
        "--limit-in-flight", type=int, default=None, help="429 past this many calls at once"
    )
    parser.add_argument("--retry-after", type=float, default=0.1, help="a 429's Retry-After")
    args = parser.parse_args(argv)
    server = factory(
        Reply(
            content=args.content,
            delay_s=args.latency_ms / 1000.0,
            input_tokens=args.input_tokens,
            output_tokens=args.output_tokens,
        )
    )
    server.limit_in_flight = args.limit_in_flight
    server.limit_retry_after_s = args.retry_after
    server.start()
    print(f"PORT {server.port}", flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()
