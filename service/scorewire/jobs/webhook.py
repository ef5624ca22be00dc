"""Completion webhooks: a finished job POSTed as JSON to its caller's URL, signed.

The body is the job's id, state, run id and progress; the header
`X-Scorewire-Signature: sha256=<hex>` is HMAC-SHA256 over the exact body bytes, keyed by
`SCOREWIRE_JOBS_WEBHOOK_SECRET`, so the receiver checks it came from this server.
`X-Scorewire-Job` carries the job id. A 2xx answer is delivery; anything else (an error
status, a refused connection, a timeout) is tried again after 1 s, 2 s, 4 s ... up to
`jobs_webhook_attempts` tries, then given up and logged.

The webhook is stored in the job store with the job's end, in one transaction, and sent
from there (an outbox): every server with job runners takes due webhooks under a lease,
tries each once, and records the try. A server stopped or killed between tries leaves
the webhook to another (or to itself, restarted) once its lease lapses, so a deploy or a
crash does not lose it; a receiver may get the same webhook twice (a server died after
its POST and before recording it), and tells by `X-Scorewire-Job`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging

import aiohttp
from scorewire.jobs.job_model import Job, JobStore, PendingWebhook, utc_now
from scorewire.jobs.sql import micros

log = logging.getLogger("scorewire.jobs")

SIGNATURE_HEADER = "X-Scorewire-Signature"
JOB_HEADER = "X-Scorewire-Job"


def signature(secret: bytes, body: bytes) -> str:
    """The signature header's value for `body`."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def body_of(job: Job) -> str:
    """The JSON body a job's webhook carries."""
    return json.dumps(
        {
            "job_id": job.job_id,
            "state": job.state.value,
            "run_id": job.run_id,
            "cases_done": job.cases_done,
            "cases_total": job.cases_total,
            "error": job.error,
        },
        sort_keys=True,
    )


BATCH = 16
"""Webhooks taken and tried together."""


class Webhooks:
    """Sends the job store's due webhooks, one try each, in the background (see the module)."""

    def __init__(self, secret: bytes, *, attempts: int, timeout_s: float) -> None:
        self._secret = secret
        self._attempts = attempts
        self._timeout_s = timeout_s
        self._due = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.first_retry_s = 1.0
        """Seconds before the second try (doubled for each later one)."""
        self.sent = 0
        """Webhooks this process delivered."""

    def start(self, store: JobStore, owner: str, poll_s: float) -> None:
        """Deliver the store's due webhooks now, at each `poke()`, and every `poll_s`."""
        loop = self._loop(store, owner, poll_s)
        self._task = asyncio.create_task(loop, name="scorewire-webhooks")

    def poke(self) -> None:
        """A webhook was stored: look now, not at the next poll."""
        self._due.set()

    async def _loop(self, store: JobStore, owner: str, poll_s: float) -> None:
        while True:
            try:
                if await self.deliver_due(store, owner) == BATCH:
                    continue  # more may be due
            except Exception as err:  # the store down: look again later
                log.warning("sending due webhooks failed: %s", err)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._due.wait(), poll_s)
            self._due.clear()

    async def deliver_due(self, store: JobStore, owner: str) -> int:
        """One pass: take the due webhooks, try each once, record the tries; how many."""
        lease_s = self._timeout_s + 30.0  # a try, and the write recording it
        due = await store.due_webhooks(owner, lease_s, BATCH)
        if due:
            timeout = aiohttp.ClientTimeout(total=self._timeout_s)
            async with aiohttp.ClientSession(timeout=timeout) as session:
                await asyncio.gather(*(self._try(session, store, owner, w) for w in due))
        return len(due)

    async def _try(
        self, session: aiohttp.ClientSession, store: JobStore, owner: str, w: PendingWebhook
    ) -> None:
        attempt = w.attempts + 1
        why = await self.post(session, w.url, w.body.encode(), w.job_id)
        if why is None:
            self.sent += 1
        else:
            log.warning("job %s: webhook try %d of %d failed (%s)", w.job_id, attempt,
                        self._attempts, why)  # fmt: skip
            if attempt >= self._attempts:
                log.error("job %s: webhook given up after %d tries", w.job_id, attempt)
        wait = self.first_retry_s * 2 ** (attempt - 1)
        retry_at = micros(utc_now()) + int(wait * 1e6)
        done = why is None or attempt >= self._attempts
        await store.webhook_tried(w.job_id, owner, done=done, attempts=attempt,
                                  retry_at_us=retry_at)  # fmt: skip

    async def post(
        self, session: aiohttp.ClientSession, url: str, body: bytes, job_id: str
    ) -> str | None:
        """POST `body` to `url` once, signed; None when it arrived, else why not."""
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(self._secret, body),
            JOB_HEADER: job_id,
        }
        try:
            async with session.post(url, data=body, headers=headers) as answer:
                if 200 <= answer.status < 300:
                    return None
                return f"HTTP {answer.status}"
        except (aiohttp.ClientError, TimeoutError) as err:
            return type(err).__name__

    async def close(self) -> None:
        """Stop sending; webhooks not delivered stay stored for the next server."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
