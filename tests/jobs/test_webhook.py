"""A finished job POSTs its webhook to a local HTTP server, signed with HMAC-SHA256 over
the body; a failed delivery is tried again."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from pathlib import Path

from aiohttp import web
from scorewire.v1 import jobs_pb2 as jpb

from tests.jobs.servers import job_server, requests, texts, watch_to_end

SECRET = "webhook-secret"


async def test_the_webhook_arrives_signed_after_a_failed_try(tmp_path: Path) -> None:
    # the receiver answers 503 first: the server tries again (1 s later) and it arrives
    got: list[tuple[bytes, str]] = []
    arrived = asyncio.Event()

    async def hook(request: web.Request) -> web.Response:
        got.append((await request.read(), request.headers.get("X-Scorewire-Signature", "")))
        if len(got) == 1:
            return web.Response(status=503)
        arrived.set()
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with job_server(tmp_path, jobs_webhook_secret=SECRET) as srv:
            config = jpb.JobConfig(
                compact=["contains:Paris"], webhook_url=f"http://127.0.0.1:{port}/hook"
            )
            job = (await srv.jobs.CreateJob(requests(config, texts(["Paris", "Rome"])))).job
            end = (await watch_to_end(srv.jobs, job.job_id))[-1]
            await asyncio.wait_for(arrived.wait(), 10)
    finally:
        await runner.cleanup()
    body, signature = got[-1]
    expected = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert signature == f"sha256={expected}"
    sent = json.loads(body)
    assert sent["job_id"] == job.job_id and sent["state"] == "succeeded"
    assert sent["run_id"] == end.run_id and sent["cases_done"] == 2
    assert len(got) == 2 and got[0][0] == body  # the same signed body, tried twice
