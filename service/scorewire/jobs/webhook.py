"""Completion webhooks: a finished job POSTed as JSON to its caller's URL, signed.

The body is the job's id, state, run id and progress; the header
`X-Scorewire-Signature: sha256=<hex>` is HMAC-SHA256 over the exact body bytes, keyed by
`SCOREWIRE_JOBS_WEBHOOK_SECRET`, so the receiver checks it came from this server.
`X-Scorewire-Job` carries the job id. A 2xx answer is delivery; anything else (an error
status, a refused connection, a timeout) is tried again after 1 s, 2 s, 4 s ... up to
`jobs_webhook_attempts` tries, then given up and logged. Delivery is at most that many
tries from the replica that finished the job: a replica that dies meanwhile does not send it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging

import aiohttp
from scorewire.jobs.job_model import Job

log = logging.getLogger("scorewire.jobs")

SIGNATURE_HEADER = "X-Scorewire-Signature"
JOB_HEADER = "X-Scorewire-Job"


def signature(secret: bytes, body: bytes) -> str:
    """The signature header's value for `body`."""
    return "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()


def body_of(job: Job) -> bytes:
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
    ).encode()


class Webhooks:
    """Sends completion webhooks in the background (see the module)."""

    def __init__(self, secret: bytes, *, attempts: int, timeout_s: float) -> None:
        self._secret = secret
        self._attempts = attempts
        self._timeout_s = timeout_s
        self._sending: set[asyncio.Task[bool]] = set()
        self.first_retry_s = 1.0
        """Seconds before the second try (doubled for each later one)."""

    def send(self, job: Job) -> asyncio.Task[bool]:
        """Send the job's webhook in the background; the task answers whether it arrived."""
        task = asyncio.create_task(self.deliver(job.webhook_url, body_of(job), job.job_id))
        self._sending.add(task)
        task.add_done_callback(self._sending.discard)
        return task

    async def deliver(self, url: str, body: bytes, job_id: str) -> bool:
        """POST `body` to `url` until a 2xx or the last try."""
        headers = {
            "Content-Type": "application/json",
            SIGNATURE_HEADER: signature(self._secret, body),
            JOB_HEADER: job_id,
        }
        timeout = aiohttp.ClientTimeout(total=self._timeout_s)
        wait = self.first_retry_s
        async with aiohttp.ClientSession(timeout=timeout) as session:
            for attempt in range(1, self._attempts + 1):
                try:
                    async with session.post(url, data=body, headers=headers) as answer:
                        if 200 <= answer.status < 300:
                            return True
                        why = f"HTTP {answer.status}"
                except (aiohttp.ClientError, TimeoutError) as err:
                    why = type(err).__name__
                log.warning("job %s: webhook try %d of %d failed (%s)", job_id, attempt,
                            self._attempts, why)  # fmt: skip
                if attempt < self._attempts:
                    await asyncio.sleep(wait)
                    wait *= 2
        return False

    async def close(self) -> None:
        """Stop the webhooks still being tried."""
        for task in list(self._sending):
            task.cancel()
        for task in list(self._sending):
            with contextlib.suppress(asyncio.CancelledError):
                await task
