"""The jobs page's examples run: its client program against a real server (its address
swapped for the test server's), and its signature check against a webhook body."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import io
from pathlib import Path

import pytest

from tests.docs.blocks import blocks
from tests.jobs.servers import job_server
from tests.support.servers import ROOT

PAGE = ROOT / "docs" / "jobs.md"


def _python() -> list[str]:
    return [b.body for b in blocks(PAGE) if b.lang == "python"]


async def test_the_client_example_creates_and_watches_a_job(tmp_path: Path) -> None:
    # it prints progress, then the contains check's aggregations (2 of 3 pass)
    program = _python()[0]
    async with job_server(tmp_path) as srv:
        code = program.replace("127.0.0.1:50051", srv.address)
        out = io.StringIO()

        def run() -> None:
            with contextlib.redirect_stdout(out):
                exec(compile(code, str(PAGE), "exec"), {})

        await asyncio.to_thread(run)
    last = out.getvalue().strip().splitlines()[-1].split()
    assert last[0] == "contains:Paris" and float(last[1]) == pytest.approx(2 / 3)


def test_the_signature_check_accepts_the_servers_signature_only() -> None:
    # the page's `genuine` against the header the server sends (jobs.webhook.signature)
    from scorewire.jobs.webhook import signature

    scope: dict[str, object] = {}
    exec(_python()[1], scope)
    genuine = scope["genuine"]
    body = b'{"job_id": "job_1"}'
    assert genuine(body, signature(b"k", body), b"k")  # type: ignore[operator]
    assert not genuine(body, signature(b"other", body), b"k")  # type: ignore[operator]
    assert hmac.new(b"k", body, hashlib.sha256).hexdigest() in signature(b"k", body)
