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
from tests.support.wait import wait_until_async

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


async def test_a_webhook_a_stopped_server_could_not_deliver_is_sent_by_the_next(
    tmp_path: Path,
) -> None:
    # The receiver is down when the job ends: the first try fails, then that server stops
    # (a deploy). The webhook was stored with the job's end, so the next server on the
    # same store delivers it once the receiver is back (before, it died with the server).
    import socket
    import sqlite3

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there yet: connections are refused
    url = f"http://127.0.0.1:{port}/hook"
    config = jpb.JobConfig(compact=["contains:Paris"], webhook_url=url)

    def tries() -> int:
        with sqlite3.connect(tmp_path / "jobs.db") as db:
            rows = db.execute("SELECT attempts FROM webhooks").fetchall()
        return rows[0][0] if rows else -1

    async with job_server(tmp_path, jobs_webhook_secret=SECRET) as srv:
        job = (await srv.jobs.CreateJob(requests(config, texts(["Paris"])))).job
        assert (await watch_to_end(srv.jobs, job.job_id))[-1].state == jpb.JOB_STATE_SUCCEEDED
        await wait_until_async(lambda: tries() == 1, "the first try failed and was recorded")
    got: list[bytes] = []

    async def hook(request: web.Request) -> web.Response:
        got.append(await request.read())
        return web.Response(status=204)

    app = web.Application()
    app.router.add_post("/hook", hook)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        async with job_server(tmp_path, jobs_webhook_secret=SECRET):
            await wait_until_async(lambda: got, "the next server delivered it")
            await wait_until_async(lambda: tries() == -1, "delivered, it is forgotten")
    finally:
        await runner.cleanup()
    sent = json.loads(got[0])
    assert sent["job_id"] == job.job_id and sent["state"] == "succeeded" and len(got) == 1
