"""An empty provider URL variable means unset, as every URL setting of ours does.

deploy/compose.yaml passes `OPENAI_BASE_URL: ${OPENAI_BASE_URL:-}`, which sets it empty
when the shell lacks it; the OpenAI SDK used to take the empty value as its base URL and
every judge call failed before leaving the process. A real `scorewire serve` with that
environment and an HTTPS proxy variable pointing at a recording proxy on loopback: the
judge's call must head for api.openai.com through the proxy (the machine has no network,
so the check then ends in an error, never a pass).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.support.servers import serve_process, stop_process


class RefusingProxy:
    """Records the first line of every request it is sent and refuses each (403)."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.url = ""
        self._server: asyncio.Server | None = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):
            head = await reader.readuntil(b"\r\n\r\n")
            self.requests.append(head.split(b"\r\n", 1)[0].decode())
            writer.write(b"HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n")
            await writer.drain()
        writer.close()

    async def __aenter__(self) -> RefusingProxy:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self._server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()


@pytest.fixture
async def proxy() -> AsyncIterator[RefusingProxy]:
    async with RefusingProxy() as p:
        yield p


async def test_an_empty_openai_base_url_means_the_sdk_default(
    proxy: RefusingProxy, tmp_path: Path
) -> None:
    env = {
        "OPENAI_BASE_URL": "",
        "OPENAI_API_KEY": "sk-test",
        "HTTPS_PROXY": proxy.url,
        "https_proxy": proxy.url,
        "NO_PROXY": "",
        "no_proxy": "",
        "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
        "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
        # Every call is refused: its retries come at once instead of over 7.5 s of backoff.
        "SCOREWIRE_JUDGE_RETRY_BASE_S": "0.01",
    }
    proc, address = await asyncio.to_thread(serve_process, env)
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = scoring_pb2_grpc.ScoringServiceStub(channel)
            judge = pb.CheckSpec(type="judge", params={"rubric": "Is it polite?"})
            request = pb.ScoreRequest(output=pb.Output(text="Hello."), checks=[judge])
            answer = await stub.Score(request, timeout=120)
    finally:
        await asyncio.to_thread(stop_process, proc)
    assert any(r.startswith("CONNECT api.openai.com:443") for r in proxy.requests), proxy.requests
    assert answer.scores[0].HasField("error") and not answer.passed
