"""A RunSuite's chunks in the scoring workers: checked, sent on at once, answered in order.

The handler checks every case (output sizes, JSON text) before it answers anything; the
first problem is the call's error, as if no case had been scored. Checking all 20,000
cases of a big run takes about as long as scoring a tenth of them, so rather than leave
the workers idle meanwhile, each chunk goes to them as soon as its own cases have passed.
Scoring has no effect outside the worker, so a chunk scored for a call that then fails
is only work thrown away (at most `share` chunks: later ones are not sent).

Chunks run `share` at a time; the next one is sent the moment one finishes (from the
task's completion callback), not when the reader has taken the oldest answer, so a worker
does not wait for the stream. Answers are yielded in chunk order; at most `buffered`
chunks are sent but not yet yielded, which bounds the memory a slow reader can hold.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any

from scorewire.server import scoring_worker as sw

Answer = tuple[Any, ...]

_DETACHED: set[asyncio.Task[Answer]] = set()
"""Chunks left to finish after their call failed (asyncio keeps only weak references)."""


class ChunkRun:
    """The chunk jobs of one RunSuite; `check()`, then `answers()`, and `close()` always."""

    def __init__(
        self,
        jobs: Iterator[sw.Job] | AsyncIterator[sw.Job],
        run: Callable[[sw.Job], Awaitable[Answer]],
        share: int,
        buffered: int,
    ) -> None:
        """`jobs` checks each chunk's cases as it makes its job (raising the first
        problem), from the request or as a stream brings them; `run` scores a job in the
        workers; `share` chunks run at once."""
        self._jobs = jobs
        self._run = run
        self._share = share
        self._buffered = max(share, buffered)
        self._ready: collections.deque[sw.Job] = collections.deque()
        self._order: collections.deque[tuple[sw.Job, asyncio.Task[Answer]]] = collections.deque()
        self._running = 0
        self._closed = False

    async def check(self) -> None:
        """Make every job (so check every case), sending each to the workers at once.

        Yields to the event loop between chunks, so that other calls, and the answers of
        the chunks already sent, go on meanwhile.
        """
        if isinstance(self._jobs, AsyncIterator):  # waiting for the stream yields already
            async for job in self._jobs:
                self._ready.append(job)
                self._top_up()
            return
        for job in self._jobs:
            self._ready.append(job)
            self._top_up()
            await asyncio.sleep(0)

    def _top_up(self) -> None:
        while (
            self._ready
            and not self._closed
            and self._running < self._share
            and len(self._order) < self._buffered
        ):
            job = self._ready.popleft()
            task = asyncio.ensure_future(self._run(job))
            self._running += 1
            task.add_done_callback(self._finished)
            self._order.append((job, task))

    def _finished(self, task: asyncio.Task[Answer]) -> None:
        self._running -= 1
        self._top_up()

    async def answers(self) -> AsyncIterator[tuple[sw.Job, Answer]]:
        """Each job with its answer, in chunk order (after `check()`)."""
        while self._order:
            job, task = self._order[0]
            answer = await asyncio.shield(task)
            self._order.popleft()
            self._top_up()
            yield job, answer

    async def close(self, *, detach: bool = False) -> None:
        """Stop sending chunks. Unfinished ones are cancelled (which stops the worker
        running one), or with `detach` left to finish unread: a call refused before
        any answer need not cost a worker."""
        self._closed = True
        self._ready.clear()
        tasks = [t for _, t in self._order if not t.done()]
        for _, t in self._order:
            if t.done() and not t.cancelled():
                t.exception()  # retrieved: an answer nobody reads is not an error
        self._order.clear()
        if detach:
            for t in tasks:
                _DETACHED.add(t)
                t.add_done_callback(_forget)
            return
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)


def _forget(task: asyncio.Task[Answer]) -> None:
    _DETACHED.discard(task)
    if not task.cancelled():
        task.exception()
