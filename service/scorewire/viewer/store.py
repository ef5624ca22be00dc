"""The results viewer over the run store: the recorded runs a caller may see, as pages.

The viewer serves each request in a thread of its own; the run store is async and lives
on the server's event loop. `StoreRunSource` therefore hands every store call to that
loop (`asyncio.run_coroutine_threadsafe`) and waits for it at most the viewer's request
timeout: one set of connections, one loop. Only the store's reads run on the loop;
decoding the chunks into cases happens in the viewer's thread.

Scope (bearer tokens on): a token sees only the runs made with it, unless its role is
`admin`, exactly as RunService does (`visible_tenant`); another tenant's run is "not
found", like a run that does not exist.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Coroutine
from datetime import datetime
from typing import Any, TypeVar

from scorewire.runs import (
    CaseRecord,
    RunInfo,
    RunQuery,
    RunStatus,
    RunStore,
    RunsUnavailable,
    ScoreRecord,
)
from scorewire.scoring.recorded import CODEC
from scorewire.viewer.run_views import compare_runs
from scorewire.viewer.serving import SourceFor
from scorewire.viewer.source import filter_cases
from scorewire.viewer.view_model import (
    CaseResult,
    CheckStats,
    Comparison,
    Outcome,
    RunDetail,
    RunNotFound,
    ScoreResult,
    SourceUnavailable,
    Spread,
)
from scorewire.viewer.view_model import RunInfo as ViewRun

T = TypeVar("T")

LIST_PAGE = 500
"""Runs read from the store per listing query (the list pages through all of them)."""
CHUNKS_PER_READ = 16
"""Chunks read from the store per call when loading a run's cases."""
CACHED_RUNS = 4
"""Finished runs whose decoded cases are kept (a run page, then its compare page)."""


# ---- the store's records as the viewer's model ---------------------------------------------


def _suite_format(run: RunInfo) -> str:
    """checkllm or evalstone for a YAML suite (as the server detects it), else empty."""
    text = run.suite.lstrip()
    if not text or text.startswith("{"):
        return ""  # checks sent as messages, stored as JSON
    keys = {line.split(":", 1)[0].strip() for line in text.splitlines() if line[:1].isalpha()}
    return "checkllm" if {"tests", "prompts"} & keys else "evalstone"


def view_info(run: RunInfo) -> ViewRun:
    """A stored run as the runs list shows it."""
    s = run.summary or {}
    gate = s.get("gate") or {}
    return ViewRun(
        id=run.run_id,
        name=run.name or run.run_id,
        started_at=run.started_at,
        suite_format=_suite_format(run),
        cases=int(s.get("cases", run.results)),
        pass_rate=float(s.get("pass_rate") or 0.0),
        error_rate=float(s.get("error_rate") or 0.0),
        cost_usd=float(s.get("cost_usd") or 0.0),
        gate_passed=bool(gate.get("passed")),
        labels=dict(run.labels),
        interrupted=run.status != RunStatus.COMPLETE,
        tenant=run.tenant,
    )


def view_detail(run: RunInfo) -> RunDetail:
    """A stored run's summary as the run page shows it."""
    s = run.summary or {}
    gate = s.get("gate") or {}
    checks = [
        CheckStats(
            name=str(c.get("name", "")),
            type=str(c.get("type", "")),
            passed=int(c.get("passed", 0)),
            failed=int(c.get("failed", 0)),
            errored=int(c.get("errored", 0)),
            skipped=int(c.get("skipped", 0)),
            mean_value=float(c.get("mean_value") or 0.0),
            cost_usd=float(c.get("cost_usd") or 0.0),
            cached=int(c.get("cached", 0)),
        )
        for c in s.get("checks") or []
        if isinstance(c, dict)
    ]
    if not checks:  # running or incomplete: no summary yet, but the checks are known
        checks = [CheckStats(name, "", 0, 0, 0, 0, 0.0) for name in run.checks]
    info = view_info(run)
    return RunDetail(
        info=info,
        checks=checks,
        gate_reasons=[str(r) for r in gate.get("reasons") or []],
        cases_passed=int(s.get("cases_passed", 0)),
        planned_cases=info.cases,
        judge_cost_usd=float(s.get("cost_usd") or 0.0),
        cached_scores=sum(c.cached for c in checks),
        unpriced=bool(s.get("unpriced")),
    )


def view_score(s: ScoreRecord) -> ScoreResult:
    """One recorded score as the viewer shows it."""
    error = (s.error_code, s.error_message) if s.error_code or s.error_message else None
    return ScoreResult(
        name=s.name,
        type=s.type,
        value=None if error is not None else s.value,
        passed=s.passed and error is None,
        reason=s.reason,
        skipped=s.skipped,
        cached=s.cached,
        cost_usd=s.cost_usd,
        error=error,
        latency_ms=s.latency_ms,
        judges=s.judges,
        reported_models=s.reported_models,
        prompt_version=s.prompt_version,
        spread=None
        if s.spread is None
        else Spread(s.spread.n, s.spread.agreement, tuple(s.spread.values)),
    )


def view_case(r: CaseRecord) -> CaseResult:
    """One recorded case as the viewer shows it: a JSON output value as its JSON text."""
    output: str | None = r.output
    if not output and r.output_value is not None:
        output = json.dumps(r.output_value, ensure_ascii=False)
    provider = description = ""
    test = prompt_index = None
    if isinstance(r.raw, tuple) and r.raw:
        provider = str(getattr(r.raw[0], "provider", "") or "")
        # A checkllm case sent by the CLI carries its test's description in its metadata.
        meta = getattr(getattr(r.raw[0], "sample", None), "metadata", None)
        if meta is not None and "description" in meta:
            description = str(meta["description"] or "")
        if meta is not None:
            # a Struct has no get()
            test = _index(meta["test"]) if "test" in meta else None
            prompt_index = _index(meta["prompt_index"]) if "prompt_index" in meta else None
    return CaseResult(
        index=r.index,
        sample_id=r.sample_id,
        input=r.input,
        expected=r.expected,
        output=output,
        passed=r.passed,
        scores=[view_score(s) for s in r.scores],
        provider=provider,
        description=description,
        cost_usd=sum(s.cost_usd for s in r.scores),
        test=test,
        prompt_index=prompt_index,
    )


def _index(raw: Any) -> int | None:
    """An index from a sample's metadata (a Struct's numbers are floats)."""
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return int(raw) if raw >= 0 and raw == int(raw) else None


# ---- the source --------------------------------------------------------------------------


class StoreRuns:
    """The run store as seen from the viewer's threads: every call goes to `loop`.

    Shared by every caller's `StoreRunSource`; keeps the decoded cases of the last few
    finished runs (a finished run's results no longer change). Thread-safe.
    """

    def __init__(
        self, store: RunStore, loop: asyncio.AbstractEventLoop, *, timeout_s: float
    ) -> None:
        self.store = store
        self.loop = loop
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._cases: OrderedDict[str, list[CaseResult]] = OrderedDict()

    def call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` on the server's loop and wait for it, at most `timeout_s`."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(self.timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise SourceUnavailable(
                f"the run store did not answer within SCOREWIRE_VIEWER_REQUEST_TIMEOUT_S "
                f"({self.timeout_s:g} s)"
            ) from None
        except RunsUnavailable as err:
            # In the store's words, as RunService tells its callers (they name the store
            # and what happened; a driver's detail went to the log).
            raise SourceUnavailable(f"{err}; try again later") from None

    def cases(self, run: RunInfo) -> list[CaseResult]:
        """Every recorded case of the run, in recorded order."""
        finished = run.status != RunStatus.RUNNING
        with self._lock:
            cached = self._cases.get(run.run_id) if finished else None
            if cached is not None:
                self._cases.move_to_end(run.run_id)
                return cached
        out: list[CaseResult] = []
        cursor = 0
        while True:
            chunks = self.call(
                self.store.chunks(run.run_id, after_seq=cursor, limit=CHUNKS_PER_READ)
            )
            if not chunks:
                break
            for seq, chunk in chunks:
                out.extend(view_case(r) for r in CODEC.decode(chunk))
                cursor = seq
        if finished:
            with self._lock:
                self._cases[run.run_id] = out
                while len(self._cases) > CACHED_RUNS:
                    self._cases.popitem(last=False)
        return out


class StoreRunSource:
    """The runs one caller may see (`tenant` None: every run), as a viewer `RunSource`."""

    def __init__(self, runs: StoreRuns, tenant: str | None) -> None:
        self._runs = runs
        self._tenant = tenant

    def _stored(self, run_id: str) -> RunInfo:
        run = self._runs.call(self._runs.store.get_run(run_id))
        if run is None or (self._tenant is not None and run.tenant != self._tenant):
            raise RunNotFound(run_id)  # another tenant's run is not confirmed to exist
        return run

    def list_runs(self) -> list[ViewRun]:
        """Every visible run, newest first."""
        query = RunQuery(tenant=self._tenant)
        out: list[ViewRun] = []
        after: tuple[datetime, str] | None = None
        while True:
            page = self._runs.call(self._runs.store.list_runs(query, after=after, limit=LIST_PAGE))
            out.extend(view_info(r) for r in page)
            if len(page) < LIST_PAGE:
                return out
            after = (page[-1].started_at, page[-1].run_id)

    def get_run(self, run_id: str) -> RunDetail:
        """A visible run's summary; RunNotFound otherwise."""
        return view_detail(self._stored(run_id))

    def results(
        self, run_id: str, check: str | None = None, outcome: Outcome | None = None
    ) -> list[CaseResult]:
        """A visible run's cases in recorded order, those matching the filter."""
        return filter_cases(self._runs.cases(self._stored(run_id)), check, outcome)

    def compare(self, base_id: str, run_id: str) -> Comparison:
        """`run_id` against `base_id` (both visible), by the viewer's own comparison."""
        base, run = self._stored(base_id), self._stored(run_id)
        return compare_runs(
            view_detail(base), self._runs.cases(base), view_detail(run), self._runs.cases(run)
        )


def store_source_for(
    store: RunStore,
    loop: asyncio.AbstractEventLoop,
    tenant_of: Callable[[Any], str | None],
    *,
    timeout_s: float,
) -> SourceFor:
    """`source_for` of the served viewer: the principal (None with auth off) -> its runs,
    those of `tenant_of(principal)` (None: every tenant's)."""
    runs = StoreRuns(store, loop, timeout_s=timeout_s)

    def source_for(who: Any) -> StoreRunSource:
        return StoreRunSource(runs, tenant_of(who))

    return source_for
