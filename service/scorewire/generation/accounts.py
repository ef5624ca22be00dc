"""Provider accounts: the SDK client of each, and how many calls it takes at once.

A provider's rate limits belong to the account (the key), not to one request: every
request generating with the server's key draws on the same requests per minute. So the
server keeps one `Account` per backend, base URL and key (its settings make a handful),
shared by every request's providers:

- **The SDK client.** A client of its own cost each request its TLS context (~20 ms to
  build) and new connections; shared, both outlive the request. Clients send through
  the SDKs' aiohttp transport, as the judge's do (`judge.backends.base`).
- **The window.** How many calls the account takes at once is learned from its answers,
  as TCP learns a path's window: from `generation_provider_concurrency`, one more call
  per answer while none is refused (slow start: the window doubles each round trip),
  then one more per window's worth of answers; when the provider answers 429, cut to
  the calls it was still answering (it took those), once per window (the refusals of
  calls sent before the cut do not cut it again), between 1 and
  `generation_provider_max_concurrency`. Halving, as TCP does, would leave a provider
  that takes a fixed number of calls at once about a quarter idle. The window's slots are shared by
  the callers in turn (`core.fairness.FairSlots`): a tenant with many generations
  waiting waits behind itself, not in front of another tenant. With
  `generation_provider_tenant_share` under 1, a tenant holds at most that share of the
  window at once: a call holds its slot as long as it runs, so a tenant whose calls hang
  leaves the rest to the others (at the cost of that much of the window for a tenant
  alone: off by default).
- **Retries are the provider's**, not the SDK's (`max_retries=0`): a 429 is retried after
  its Retry-After (or a backoff) outside the window, for as long as the call's time
  allows; a 5xx, a timeout or a dropped connection up to `generation_max_retries` times.
  A request of its own (the CLI, the in-process API) gets an account of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from scorewire.core.fairness import FairSlots, current_caller
from scorewire.core.sdk_urls import unset_empty_sdk_urls
from scorewire.core.secrets import register
from scorewire.judge.retry import RetryPolicy

T = TypeVar("T")

START_WINDOW = 8
"""Calls an account takes at once before its answers say more
(`generation_provider_concurrency`)."""
MOST_WINDOW = 128
"""The most calls an account is sent at once (`generation_provider_max_concurrency`)."""


class CallWindow:
    """How many calls an account takes at once (see the module docstring)."""

    def __init__(
        self, start: int = START_WINDOW, most: int = MOST_WINDOW, tenant_share: float = 1.0
    ) -> None:
        self._most = max(1, most)
        share = None if tenant_share >= 1.0 else tenant_share
        self.slots = FairSlots(min(max(1, start), self._most), share=share)
        self._slow_start = True
        self._growth = 0.0
        self._epoch = 0
        self.cuts = 0
        """How many times a 429 has halved the window."""

    @property
    def size(self) -> int:
        """Calls the account may have in flight now."""
        return self.slots.capacity

    @contextlib.asynccontextmanager
    async def call(self) -> AsyncIterator[int]:
        """Hold one of the window's slots, in the current caller's turn, while the block
        runs; yields the window's epoch, for `refused`."""
        async with self.slots.slot(current_caller.get()):
            yield self._epoch

    def answered(self) -> None:
        """A call was answered: the window grows."""
        if self.size >= self._most:
            return
        if not self._slow_start:
            self._growth += 1.0 / self.size
            if self._growth < 1.0:
                return
            self._growth -= 1.0
        self.slots.resize(self.size + 1)

    def refused(self, epoch: int) -> None:
        """A call sent in `epoch`, still holding its slot, was refused with a 429: the
        window shrinks to the other calls in flight (what the provider was taking), at
        least by one and to no less than one, unless a refusal of that epoch has already
        cut it."""
        if epoch != self._epoch:
            return
        self._epoch += 1
        self.cuts += 1
        self._slow_start = False
        self._growth = 0.0
        others = self.size - self.slots.free - 1
        self.slots.resize(min(self.size - 1, others))


@dataclass(frozen=True, slots=True)
class Failure:
    """Why an attempt produced nothing, as the provider words it for people."""

    message: str
    retry: bool = False
    """Worth another attempt (a 5xx, a timeout, a dropped connection)."""
    rate_limited: bool = False
    """A 429: the window is cut and the call waits, beyond `max_retries`."""
    retry_after: float | None = None


class AttemptFailed(Exception):
    """An attempt that produced nothing (`Failure`)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.message)
        self.failure = failure


class Account:
    """One provider account's SDK client and window."""

    def __init__(self, client: Any, window: CallWindow, *, max_retries: int) -> None:
        self.client = client
        self.window = window
        self._retry = RetryPolicy(max_retries=max_retries)

    async def call(self, attempt: Callable[[float], Awaitable[T]], timeout_s: float) -> T:
        """`attempt(timeout)` within the window, retried as the module says; every attempt
        and wait within `timeout_s` in all. The last attempt's AttemptFailed when none
        answers."""
        end = time.monotonic() + timeout_s
        retries = 0
        while True:
            left = end - time.monotonic()
            async with self.window.call() as epoch:
                try:
                    answer = await attempt(max(left, 0.001))
                except AttemptFailed as err:
                    failure = err.failure
                    if failure.rate_limited:
                        self.window.refused(epoch)
                else:
                    self.window.answered()
                    return answer
            if not failure.rate_limited and (
                not failure.retry or retries >= self._retry.max_retries
            ):
                raise AttemptFailed(failure)
            wait = self._retry.delay(retries, failure.retry_after)
            retries += 1
            if time.monotonic() + wait >= end:
                raise AttemptFailed(failure)
            await asyncio.sleep(wait)


class SdkClients:
    """The accounts of a server's providers, shared by every request's providers."""

    def __init__(
        self, *, start: int = START_WINDOW, most: int = MOST_WINDOW, tenant_share: float = 1.0
    ) -> None:
        self._start, self._most, self._share = start, most, tenant_share
        self._accounts: dict[tuple[str, str | None, str, int], Account] = {}

    def __len__(self) -> int:
        return len(self._accounts)

    def get(self, backend: str, api_key: str, base_url: str | None, max_retries: int) -> Account:
        """The account of these credentials, made on first use."""
        key = (backend, base_url, api_key, max_retries)
        account = self._accounts.get(key)
        if account is None:
            account = self._accounts[key] = own_account(
                backend, api_key, base_url, max_retries,
                start=self._start, most=self._most, tenant_share=self._share,
            )  # fmt: skip
        return account

    async def aclose(self) -> None:
        """Close every client (the server is stopping)."""
        accounts, self._accounts = list(self._accounts.values()), {}
        for account in accounts:
            await account.client.close()


def own_account(
    backend: str,
    api_key: str,
    base_url: str | None,
    max_retries: int,
    *,
    start: int = START_WINDOW,
    most: int = MOST_WINDOW,
    tenant_share: float = 1.0,
) -> Account:
    """A new account: an `openai.AsyncOpenAI` (`backend` openai or gemini) or an
    `anthropic.AsyncAnthropic` on the SDK's aiohttp transport, and a window of its own."""
    register(api_key)
    unset_empty_sdk_urls()  # an empty OPENAI_BASE_URL & co. mean the default
    client: Any
    if backend == "anthropic":
        import anthropic

        client = anthropic.AsyncAnthropic(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            http_client=anthropic.DefaultAioHttpClient(),
        )
    else:
        import openai

        client = openai.AsyncOpenAI(
            api_key=api_key,
            base_url=base_url,
            max_retries=0,
            http_client=openai.DefaultAioHttpClient(),
        )
    return Account(client, CallWindow(start, most, tenant_share), max_retries=max_retries)
