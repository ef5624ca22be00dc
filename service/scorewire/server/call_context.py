"""What one call's checks run with: its deadline, its judge budgets and its tenant.

A call's judge money is held against the request's own `budget_usd` (shared through
Redis by the requests of one run when they name it in metadata), under the caller's
token budget for the period, under the server's; a judge that cannot be called or
priced under a budget is refused before any call (FAILED_PRECONDITION). A call that asks
the judges again (`judge_cache: JUDGE_CACHE_REFRESH`) reads no verdict cached before it
began; its calls are held against the same budgets as any other.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

import grpc
from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation, Precondition
from scorewire.core.fairness import current_caller
from scorewire.judge import Budget, PeriodBudget
from scorewire.judge.shared import Ledger, SharedBudget
from scorewire.scoring.plans import PlanInfo
from scorewire.server.security import current_token, principal, principals_from_settings
from scorewire.server.status import failed_precondition, invalid_argument, resource_exhausted
from scorewire.settings import Settings
from scorewire.suites.preflight import check_judges
from scorewire.v1 import scoring_pb2 as pb

Context = grpc.aio.ServicerContext[Any, Any]

RUN_ID_METADATA = "scorewire-run-id"
"""Request metadata naming the run a request belongs to: requests of one run (a batch
sharded over replicas) with `budget_usd` then share that budget, held in Redis."""

MAX_RUN_ID_CHARS = 128
"""Longest run id accepted (a longer one is INVALID_ARGUMENT)."""


def run_id(context: Context) -> str | None:
    """The request's run id from its metadata, or None."""
    for key, value in context.invocation_metadata() or ():
        if key == RUN_ID_METADATA:
            text = value if isinstance(value, str) else value.decode("utf-8", "replace")
            if not text or len(text) > MAX_RUN_ID_CHARS:
                raise invalid_argument(
                    [FieldViolation(RUN_ID_METADATA, f"must be 1-{MAX_RUN_ID_CHARS} characters")]
                )
            return text
    return None


def deadline(context: Context) -> float | None:
    """The call's deadline as a `time.monotonic()` value, or None."""
    remaining = context.time_remaining()
    return None if remaining is None else time.monotonic() + remaining


def fresh_judges(judge_cache: int, suite_default: bool, field: str) -> bool:
    """Whether a request asks the judges again: its `judge_cache` (`JudgeCache`), or the
    suite's `settings.fresh_judges` when unspecified. A value this server does not know
    is INVALID_ARGUMENT naming `field`: asked to refresh, a server must not read the cache
    because it misread the request."""
    if judge_cache == pb.JUDGE_CACHE_UNSPECIFIED:
        return suite_default
    if judge_cache == pb.JUDGE_CACHE_READ:
        return False
    if judge_cache == pb.JUDGE_CACHE_REFRESH:
        return True
    raise invalid_argument(
        [
            FieldViolation(
                field,
                f"unknown value {judge_cache}: JUDGE_CACHE_READ (1) or JUDGE_CACHE_REFRESH (2)",
            )
        ]
    )


class BytesInFlight:
    """The bytes of the requests being served, server-wide and per caller, bounded.

    A request's bytes are held from when its handler starts (it has arrived) until its
    call ends; one that would pass either bound is refused at once, so concurrent big
    requests cannot add up past what the settings allow, whoever sends them."""

    def __init__(self, total: int, per_caller: int) -> None:
        self._total, self._per_caller = total, per_caller
        self._used = 0
        self._by_caller: dict[str, int] = {}

    def holding(self, n: int, field: str = "request") -> _Held:
        """Hold `n` bytes for the current caller (`core.fairness.current_caller`) for
        the `with` block; RESOURCE_EXHAUSTED naming the setting when they do not fit.
        (A class, not a generator context manager: every unary Score enters one; the
        handler's thread CPU went 68 -> 64 µs per call with it, `bench/unary_overhead.py
        --rounds 3`, one run each.)"""
        caller = current_caller.get()
        mine = self._by_caller.get(caller, 0)
        if self._total and self._used + n > self._total:
            raise resource_exhausted(
                field,
                f"the server holds {self._used:,} bytes of requests; {n:,} more would pass "
                f"max_bytes_in_flight ({self._total:,}): retry later",
            )
        if self._per_caller and mine + n > self._per_caller:
            raise resource_exhausted(
                field,
                f"this caller's requests in flight hold {mine:,} bytes; {n:,} more would pass "
                f"max_bytes_in_flight_per_tenant ({self._per_caller:,})",
            )
        self._used += n
        self._by_caller[caller] = mine + n
        return _Held(self, caller, n)

    def _release(self, caller: str, n: int) -> None:
        self._used -= n
        left = self._by_caller[caller] - n
        if left:
            self._by_caller[caller] = left
        else:
            del self._by_caller[caller]


class _Held:
    """Bytes held by `BytesInFlight.holding`, given back when the block ends (they are
    taken when `holding` is called, so use it only as a `with` statement's expression)."""

    __slots__ = ("_caller", "_n", "_owner")

    def __init__(self, owner: BytesInFlight, caller: str, n: int) -> None:
        self._owner, self._caller, self._n = owner, caller, n

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        self._owner._release(self._caller, self._n)


class CallContexts:
    """Makes each call's `CheckContext`, and checks its judges can be called."""

    def __init__(self, settings: Settings, judge: Any, labels: Any, extras: dict[str, Any]) -> None:
        self._settings = settings
        self._judge = judge
        self._labels = labels
        # Shared by every call's context: read-only run-wide services and flags.
        self._extras = extras
        self._token_budgets: dict[str, Budget] = {}
        self._digests: dict[str, str] | None = None  # tenant name -> token digest, when asked

    def ledger(self) -> Ledger | None:
        """The judge's shared-budget store (Redis), or None: budgets are per process."""
        ledger = getattr(self._judge, "ledger", None)
        return ledger if isinstance(ledger, Ledger) else None

    def context(
        self, context: Context, budget_usd: float | None, *, fresh_judges: bool = False
    ) -> CheckContext:
        """The checks' context of one call: its deadline, judge budget and tenant, and
        whether it asks the judges again (`judge_cache`: from now on, see `fresh_judges`)."""
        if budget_usd is not None and not 0 <= budget_usd < math.inf:  # also NaN and inf
            raise invalid_argument([FieldViolation("budget_usd", "must be a finite number ≥ 0")])
        token_budget = self._token_budget()
        budget: Budget | None = None
        run = run_id(context)
        ledger = self.ledger()
        if budget_usd is not None and run is not None and ledger is not None:
            # One run's cases spread over replicas share its budget through Redis; the
            # key is the caller's too, so no caller can spend another's run.
            owner = current_token.get() or ""
            name = hashlib.sha256(f"{owner}\0{run}".encode()).hexdigest()[:32]
            budget = SharedBudget(
                ledger,
                f"run:{name}",
                budget_usd,
                key_ttl_s=self._settings.budget_run_ttl_s,
                parent=token_budget,
            )
        elif budget_usd is not None or token_budget is not None:
            budget = Budget(budget_usd, parent=token_budget)
        caller = principal(context)
        return CheckContext(
            deadline=deadline(context),
            judge=self._judge,
            labels=self._labels,
            budget=budget,
            extras=self._extras,
            # The token's name is the tenant: its labels, and its share of the verdict cache.
            tenant=caller.name if caller is not None else None,
            fresh_since=time.time() if fresh_judges else None,
        )

    def background(self, tenant: str | None) -> CheckContext:
        """The checks' context of work no call waits on (a job's chunks): no deadline and
        no per-call budget; the tenant's labels and share of the verdict cache, and its
        token's judge budget (a job spends what its tenant's calls would, not beside it)."""
        digest = self._digest_of(tenant) if tenant else None
        return CheckContext(
            judge=self._judge,
            labels=self._labels,
            extras=self._extras,
            tenant=tenant,
            budget=None if digest is None else self._token_budget(digest),
        )

    def _digest_of(self, tenant: str) -> str | None:
        """The token digest of the tenant `tenant` names (names are unique), or None."""
        if self._digests is None:
            self._digests = {p.name: d for d, p in principals_from_settings(self._settings).items()}
        return self._digests.get(tenant)

    def _token_budget(self, digest: str | None = None) -> Budget | None:
        """The judge budget for this period of the authenticated caller (or of the token
        `digest`), when one is configured."""
        limit = self._settings.judge_budget_per_token_usd
        digest = digest or current_token.get()
        if limit is None or digest is None:
            return None
        budget = self._token_budgets.get(digest)
        if budget is None:
            period = self._settings.judge_budget_period_s
            ledger = self.ledger()
            budget = (
                SharedBudget(ledger, f"token:{digest}", limit, period_s=period)
                if ledger is not None
                else PeriodBudget(limit, period)
            )
            self._token_budgets[digest] = budget
        return budget

    def _budgeted(self, budget_usd: float | None) -> bool:
        """Whether a call's judge calls are held against some budget (the request's or the
        suite's, the caller's token's, or the server's): then unpriced ones are refused."""
        return (
            budget_usd is not None
            or self._settings.judge_budget_usd is not None
            or (
                self._settings.judge_budget_per_token_usd is not None
                and current_token.get() is not None
            )
        )

    def preconditions(
        self, info: PlanInfo, budget_usd: float | None, *, credentials: bool = True
    ) -> list[Precondition]:
        """What the plan's judges need that this server lacks (cheap: no call is made)."""
        if not info.judge_models:
            return []
        return check_judges(
            info.judge_models,
            self._judge,
            budgeted=self._budgeted(budget_usd),
            credentials=credentials,
        )

    def preflight(self, info: PlanInfo, budget_usd: float | None) -> None:
        """FAILED_PRECONDITION before any judge call when a judge cannot be called."""
        problems = self.preconditions(info, budget_usd)
        if problems:
            raise failed_precondition(problems)

    def describe_judge(self, model: Any) -> str:
        """`backend:model` a check's `model:` parameter routes to (the default when unset)."""
        if self._judge is None:
            return ""
        from scorewire.judge.models import parse_model

        try:
            ref = parse_model(model if isinstance(model, str) else None)
        except ValueError:
            return str(model)
        return str(self._judge.describe(ref))
