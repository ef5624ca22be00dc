"""Judge calls honour the standard proxy variables (HTTP_PROXY, HTTPS_PROXY, NO_PROXY).

Both SDKs send through their aiohttp transport, whose own session ignores the proxy
environment; the SDKs' httpx client reads it and mounts a proxied transport. A deployment
behind a corporate forward proxy depends on that, so it is tested here through a real
forward proxy speaking HTTP/1.1 absolute-form requests (RFC 9112 §3.2.2) on loopback.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest

from tests.support.judge import compile_spec, judge_harness, level_reply

JUDGE = {"rubric": "Is the answer helpful?"}


class ForwardProxy:
    """A plain-HTTP forward proxy: takes absolute-form requests, forwards each in origin
    form to its host, relays the answer, and records every request line it was sent."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.url = ""
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ForwardProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    @staticmethod
    async def _message(reader: asyncio.StreamReader) -> tuple[bytes, bytes]:
        head = await reader.readuntil(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return head, await reader.readexactly(length)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            while True:
                head, body = await self._message(reader)
                request_line, _, rest = head.partition(b"\r\n")
                method, target, version = request_line.decode().split(" ")
                self.requests.append(f"{method} {target}")
                url = urlsplit(target)
                if upstream is None:
                    upstream = await asyncio.open_connection(url.hostname, url.port)
                path = url.path + (f"?{url.query}" if url.query else "")
                up_reader, up_writer = upstream
                up_writer.write(f"{method} {path} {version}\r\n".encode() + rest + body)
                await up_writer.drain()
                answer_head, answer_body = await self._message(up_reader)
                writer.write(answer_head + answer_body)
                await writer.drain()
        if upstream is not None:
            upstream[1].close()
        writer.close()


@pytest.fixture
async def proxy() -> AsyncIterator[ForwardProxy]:
    async with ForwardProxy() as p:
        yield p


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
async def test_judge_calls_go_through_the_proxy_the_environment_names(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    model = {"openai": "openai:gpt-4o-mini", "anthropic": "anthropic:claude-haiku-4-5"}
    async with judge_harness(judge_model=model[backend]) as h:
        fake = h.openai if backend == "openai" else h.anthropic
        fake.script(level_reply(5))
        score = await h.run(compile_spec("judge", JUDGE))
        # the stand-in checks the API key: the proxy relayed the request unchanged
        assert score.error is None and score.passed
        assert fake.calls == 1
        path = "/v1/chat/completions" if backend == "openai" else "/v1/messages"
        assert proxy.requests == [f"POST http://127.0.0.1:{fake.port}{path}"]


async def test_no_proxy_sends_judge_calls_straight_to_the_judge(
    proxy: ForwardProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    async with judge_harness(openai_default=level_reply(5)) as h:
        score = await h.run(compile_spec("judge", JUDGE))
        assert score.error is None and score.passed and h.openai.calls == 1
    assert proxy.requests == []
