"""What the serving process and its scoring workers say to each other.

A `WorkerJob` goes to a worker over its pipe; the worker answers with one of the answer
types below. Everything here is plain picklable data: compiled plans never travel (they
hold RE2 objects and closures), only their sources and keys.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scorewire.core.model import ErrorCode, Score, ScoreError
from scorewire.core.registry import REGISTRY, CheckType
from scorewire.engine.runner import CaseResult
from scorewire.engine.summary import SummaryBuilder
from scorewire.metrics.runs import Tally
from scorewire.scoring.plan_source import PlanSource
from scorewire.scoring.plans import PlanInfo


class Reply(enum.StrEnum):
    """What a job asks the worker to answer with."""

    PLAN = "plan"
    """Compile only: a `Compiled` answer."""
    SCORE = "score"
    """One case: a serialized `ScoreResponse` and its slim result."""
    RUN = "run"
    """A chunk: a serialized `RunSuiteResponse` and its `ChunkCounts`."""
    RESULTS = "results"
    """The `CaseResult`s themselves, reasons included (ScoreStream)."""
    CHECKLLM = "checkllm"
    """A chunk of a checkllm document's recorded combinations: a serialized
    `RunSuiteResponse` and its `CheckllmCounts`."""


ParentType = tuple[str, tuple[str, ...], Any, bool]
"""A server-side check type: name, aliases, parameter model, whether it uses a judge."""


@dataclass(slots=True)
class WorkerJob:
    """One unit of work: compile a plan, and score some of its cases."""

    key: bytes
    source: PlanSource | None
    """None when the server believes this worker has the plan; it answers `Missing` if not."""
    reply: Reply
    check_timeout_s: float
    """Seconds one check may run."""
    deadline: float | None = None
    """`time.monotonic()` value after which checks are not started (DEADLINE_EXCEEDED)."""
    cases: list[bytes] | None = None
    """Serialized `Case` messages; None scores the suite's own cases `first..first+count`."""
    first: int = 0
    """Batch index of the first case."""
    count: int = 0
    skip: dict[int, dict[int, str]] = field(default_factory=dict)
    """Checks not to run again, by case position then check index: the error code to give."""
    list_suites: bool = False
    compile_timeout_s: float = 30.0
    """Seconds compiling the plan (when the worker lacks it) may take."""
    parent_types: tuple[ParentType, ...] = ()
    """Custom check types registered in the server process (see `stand_ins`)."""
    bounds_ms: tuple[float, ...] | None = None
    """For `RUN` and `CHECKLLM`: the metrics histogram's bounds to tally latencies into
    (None: no metrics, no tally)."""
    combinations: list[int] | None = None
    """For `CHECKLLM`: the combination of each case, by its number in run order
    (`CheckllmSuite.combination`). Case `k` has the run index `first + k`."""
    outputs: list[str | bytes] | None = None
    """For `CHECKLLM`: each case's output, as its text, or as a serialized `Output` when
    it carries more than text; None: the document records them."""


@dataclass(slots=True)
class ChunkCounts:
    """What the server's summary and metrics need of a scored chunk, counted in the
    worker: the server adds two small objects per chunk instead of handling every score."""

    summary: SummaryBuilder
    tally: Tally | None


@dataclass(slots=True)
class CheckllmCounts(ChunkCounts):
    """What the server needs of a scored checkllm chunk: `summary` totalled by check name
    (a `GroupedSummaryBuilder`: its tests' checks differ), the chunk's prompt × provider
    cells, and each test's metrics tally (its plan's checks) instead of `tally`."""

    cells: dict[tuple[int, str], tuple[int, int, int, float]]
    """The chunk's prompt × provider cells (`Matrix.counts`)."""
    tallies: list[tuple[int, Tally]]
    """(test index, the tally of its cases in the chunk); empty without metrics."""


SlimScore = tuple[float, bool, str | None, float, float, bool, bool, bool]
"""value, passed, error code, cost_usd, latency_ms, cached, unpriced, skipped."""
SlimResult = tuple[int, str, list[SlimScore]]
"""index, sample id, scores."""


@dataclass(slots=True)
class Compiled:
    """The plan compiled (or found) within the limits; the server runs it itself when
    `info.any_async` (its checks wait on I/O), and a checkllm document but for its chunks
    of recorded outputs (`CHECKLLM`)."""

    info: PlanInfo


@dataclass(slots=True)
class Scored:
    """A job's cases scored."""

    info: PlanInfo
    message: Any
    """`SCORE`, `RUN`: the serialized response; `RESULTS`: the `CaseResult`s."""
    counts: Any
    """`RUN`: `ChunkCounts`; `SCORE`: one `SlimResult` per case; `RESULTS`: nothing."""
    cpu_s: float
    """CPU seconds the worker's thread spent scoring."""


@dataclass(slots=True)
class Invalid:
    """The source does not compile: every problem, with its field path."""

    violations: list[tuple[str, str]]


@dataclass(slots=True)
class OverLimit:
    """Compiling the source would pass a request limit (the setting named)."""

    setting: str
    field: str
    message: str


@dataclass(slots=True)
class Missing:
    """The job carried no source and the worker no longer has the plan: send it again."""


@dataclass(slots=True)
class Fault:
    """A fault of ours in the worker (the server logs it; the caller sees INTERNAL)."""

    detail: str


Answer = Compiled | Scored | Invalid | OverLimit | Missing | Fault


def slim(r: CaseResult) -> SlimResult:
    """The parts of a result the server's summary and metrics read."""
    return (
        r.index,
        r.sample_id,
        [
            (
                s.value,
                s.passed,
                None if s.error is None else s.error.code,
                s.cost_usd,
                s.latency_ms,
                s.cached,
                s.unpriced,
                s.skipped,
            )
            for s in r.scores
        ],
    )


def unslim(r: SlimResult) -> CaseResult:
    """A CaseResult from its slim form (reasons and error messages left empty)."""
    index, sample_id, scores = r
    out = []
    for value, passed, code, cost, latency, cached, unpriced, skipped in scores:
        s = Score(value, passed, cost_usd=cost, latency_ms=latency, cached=cached)
        s.unpriced = unpriced
        s.skipped = skipped
        if code is not None:
            s.error = ScoreError(code, "")
            s.passed = False
        out.append(s)
    return CaseResult(index, sample_id, out)


def killed_score(code: str, limit_s: float) -> Score:
    """The score of a check the server stopped by killing its worker."""
    if code == ErrorCode.TIMEOUT:
        return Score.fail_with_error(
            ErrorCode.TIMEOUT,
            f"the check ran past its {limit_s:g} s time limit and was stopped (check_timeout_s)",
        )
    return Score.fail_with_error(
        ErrorCode.CHECK_FAILED, "the check crashed its scoring worker; see the server log"
    )


def parent_types() -> tuple[ParentType, ...]:
    """The server's custom check types, for workers that may not have imported them."""
    out = []
    for t in REGISTRY.types():
        if t.family == "custom":
            out.append((t.name, t.aliases, t.params, t.uses_judge))
    return tuple(out)


def _placeholder_build(params: Any) -> Any:
    async def never(sample: Any, output: Any, ctx: Any) -> Score:
        raise AssertionError("a stand-in check type never runs in a scoring worker")

    return never


def stand_ins(types: Sequence[ParentType]) -> None:
    """Register a stand-in for each server-side custom type this worker lacks.

    Custom checks run in the server (they are coroutines or run on its threads), so a
    worker only validates their parameters; a stand-in is async, which sends the plan
    back to the server for scoring.
    """
    for name, aliases, params, uses_judge in types:
        if REGISTRY.get(name) is not None:
            continue
        REGISTRY.add(
            CheckType(
                name=name,
                description=f"custom check {name}",
                family="custom",
                params=params,
                build=_placeholder_build,
                is_async=True,
                uses_judge=uses_judge,
                self_testable=False,
                aliases=tuple(aliases),
            ),
            replace=True,
        )
