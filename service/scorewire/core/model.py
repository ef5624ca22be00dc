"""The domain types every check reads and returns.

Per-sample objects are plain slotted classes rather than validating models: a suite
scores tens of thousands of outputs and a validating model per result costs 10-40 µs.
Validation happens once, at the boundary (suite load, request conversion).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from scorewire.core.judged import JudgeMark

# JSON values as they arrive from YAML, JSONL or a google.protobuf.Value.
JSON = Any


class ErrorCode:
    """Machine-readable codes of a score that could not be computed.

    They are strings, not an enum, so that custom checks and the wire format can carry
    codes this module does not list.
    """

    MISSING_REFERENCE = "MISSING_REFERENCE"
    """The check needs a reference (expected value) and none was found, or it was null."""
    INVALID_REFERENCE = "INVALID_REFERENCE"
    """The reference exists but has the wrong shape (a number check given a word)."""
    INVALID_OUTPUT = "INVALID_OUTPUT"
    """The output cannot be read the way the check needs (not JSON where JSON is needed)."""
    MISSING_TRAJECTORY = "MISSING_TRAJECTORY"
    """A trajectory check found no steps list on the output."""
    CHECK_FAILED = "CHECK_FAILED"
    """A custom check raised or returned something that is not a score."""
    TIMEOUT = "TIMEOUT"
    """The check ran past its per-check timeout."""
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    """The request's deadline expired before the check finished."""
    CANCELLED = "CANCELLED"
    """The caller went away before the check finished."""
    BUDGET_EXHAUSTED = "BUDGET_EXHAUSTED"
    """The run's judge budget was spent before this check could call a judge."""
    BUDGET_UNAVAILABLE = "BUDGET_UNAVAILABLE"
    """The shared budget's store (Redis) did not answer, so the judge call was not made."""
    UNPRICED_MODEL = "UNPRICED_MODEL"
    """A budgeted call named a model without a known price, so no budget could hold it."""
    JUDGE_ERROR = "JUDGE_ERROR"
    """The judge backend failed (after retries) or is not configured."""
    INVALID_VERDICT = "INVALID_VERDICT"
    """The judge answered, but not with a verdict that can be parsed."""
    LABELS_UNAVAILABLE = "LABELS_UNAVAILABLE"
    """The human-label store did not answer."""
    CONDITION_ERROR = "CONDITION_ERROR"
    """The `when:` predicate of a conditional check could not be evaluated."""
    INVALID_INPUT = "INVALID_INPUT"
    """A streamed case was rejected (over a size limit); the other cases go on."""
    EXTRACTION_FAILED = "EXTRACTION_FAILED"
    """The extractor could not produce the content the check runs on."""


class ScoreError:
    """Why a check could not score: a code from `ErrorCode` and a message for people."""

    __slots__ = ("code", "message")

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"ScoreError({self.code!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ScoreError)
            and other.code == self.code
            and other.message == self.message
        )

    def __hash__(self) -> int:
        return hash((self.code, self.message))


class Spread:
    """How far the samples of a repeatedly sampled judge check agreed with each other.

    Attached to a Score whose check asked the judge `n` > 1 times (`samples:`); the
    score's value is the aggregate of `values`. For a panel of judges (`judges:`) each
    value is one judge's (its own samples aggregated), in the order the panel names them.
    """

    __slots__ = ("agreement", "calls", "n", "stdev", "values")

    n: int
    """Samples the value aggregates."""
    stdev: float
    """Population standard deviation of the samples' values (0 when they all agree)."""
    agreement: float
    """Share (0..1) of samples whose own pass/fail verdict is the aggregate's verdict."""
    values: tuple[float, ...]
    """Each sample's value, in sample order."""
    calls: int
    """Judge answers the value rests on: `n` for one judge's samples; for a panel, the
    sum of its judges' samples (each judge's value aggregates its own)."""

    def __init__(
        self, values: tuple[float, ...], agreement: float, *, calls: int | None = None
    ) -> None:
        self.values = values
        self.n = len(values)
        self.calls = self.n if calls is None else calls
        mean = sum(values) / self.n if values else 0.0
        self.stdev = (sum((v - mean) ** 2 for v in values) / self.n) ** 0.5 if values else 0.0
        self.agreement = agreement

    def judged(self, passes: Callable[[float], bool], passed: bool) -> Spread:
        """The spread with `agreement` recomputed for a pass rule (value -> bool)."""
        same = sum(1 for v in self.values if bool(passes(v)) == passed)
        return Spread(self.values, same / self.n if self.n else 0.0, calls=self.calls)

    def __repr__(self) -> str:
        return f"Spread(n={self.n}, stdev={self.stdev:.4g}, agreement={self.agreement:.3g})"


class Score:
    """The result of one check on one output.

    Build one with the constructor: `Score(1.0, True, "found it")`, `Score(float(ok),
    ok, reason)` for a pass/fail, or `Score.fail_with_error(code, message)` when the
    check could not score. An error is a state of its own: the constructor gives a
    score with `error` set `value` 0 and `passed` False whatever it was handed, so no
    code path can turn an error into a pass; the runner counts errors apart from plain
    failures.
    """

    __slots__ = (
        "cached",
        "cost_usd",
        "error",
        "judge",
        "latency_ms",
        "passed",
        "reason",
        "skipped",
        "spread",
        "unpriced",
        "value",
    )

    value: float
    """How well the output did, in 0..1 (1 is best); 0 when `error` is set."""
    passed: bool
    """Whether the output met the check's pass rule. Never True when `error` is set."""
    reason: str
    """A short sentence on why, for people."""
    cost_usd: float
    """Dollars spent on model calls for this score (0 for deterministic or cached)."""
    latency_ms: float
    """Wall-clock milliseconds the check took."""
    error: ScoreError | None
    """Set when the check could not score."""
    cached: bool
    """True when a judge verdict came from the verdict cache."""
    unpriced: bool
    """True when a model was called whose price is unknown, so `cost_usd` is incomplete."""
    skipped: bool
    """True when the check's `when:` condition was not met: it passes without having been
    applied (seed 003), and summaries count it apart so pass rates are not inflated."""
    spread: Spread | None
    """Set when the judge was sampled more than once (`samples:` > 1): how the samples
    agreed. None for a single verdict and for every error."""
    judge: JudgeMark | None
    """Set by the engine when the check asked a judge: which judges, what their providers
    reported, the prompt version (`scorewire.core.judged`). None otherwise."""

    def __init__(
        self,
        value: float,
        passed: bool,
        reason: str = "",
        *,
        cost_usd: float = 0.0,
        latency_ms: float = 0.0,
        error: ScoreError | None = None,
        cached: bool = False,
        unpriced: bool = False,
        skipped: bool = False,
        spread: Spread | None = None,
    ) -> None:
        if error is not None:
            value, passed, skipped = 0.0, False, False
        self.value = value
        self.passed = passed
        self.reason = reason
        self.cost_usd = cost_usd
        self.latency_ms = latency_ms
        self.error = error
        self.cached = cached
        self.unpriced = unpriced
        self.skipped = skipped
        self.spread = None if error is not None else spread
        self.judge: JudgeMark | None = None

    @classmethod
    def fail_with_error(cls, code: str, message: str, *, cost_usd: float = 0.0) -> Score:
        """A score for a check that could not score: value 0, not passed, error set."""
        return cls(0.0, False, message, error=ScoreError(code, message), cost_usd=cost_usd)

    def __repr__(self) -> str:
        err = f", error={self.error!r}" if self.error else ""
        return f"Score(value={self.value:.4g}, passed={self.passed}, reason={self.reason!r}{err})"


class Measurement(Score):
    """A Score from a check that yields a value; the engine decides whether it passes.

    A family that declares a threshold (`ThresholdRule` in the registry) returns one of
    these instead of deciding `passed` itself: the engine sets `passed` to value ≥ the
    spec's threshold and the reason to `stem` + the rule's phrase + `tail` (`BLEU
    0.412` + `, below the threshold 0.5`). Until then `passed` and `reason` hold the
    check's own verdict, which stands when no threshold is in force (a `judge` check
    without `threshold` passes at its `pass_level`), and is a fail otherwise.
    """

    __slots__ = ("stem", "tail")

    stem: str
    """The start of the reason: what was measured (`BLEU 0.412`, `level 4/5`)."""
    tail: str
    """The end of the reason, after the threshold's phrase (a judge's `: reasoning`)."""

    def __init__(
        self,
        value: float,
        stem: str,
        tail: str = "",
        *,
        passed: bool = False,
        reason: str = "",
        cost_usd: float = 0.0,
        cached: bool = False,
        unpriced: bool = False,
        spread: Spread | None = None,
    ) -> None:
        super().__init__(
            value,
            passed,
            reason or stem + tail,
            cost_usd=cost_usd,
            cached=cached,
            unpriced=unpriced,
            spread=spread,
        )
        self.stem = stem
        self.tail = tail


class Sample:
    """One evaluation case: what went into the application and what was expected."""

    __slots__ = ("expected", "id", "input", "metadata")

    def __init__(
        self,
        id: str = "",
        input: JSON = None,
        expected: JSON = None,
        metadata: dict[str, JSON] | None = None,
    ) -> None:
        self.id = id
        self.input = input
        self.expected = expected
        self.metadata = metadata if metadata is not None else {}

    def __repr__(self) -> str:
        return f"Sample(id={self.id!r})"


class Output:
    """What the application produced for a sample: text, and optionally a JSON value."""

    __slots__ = ("metadata", "parsed_text", "text", "value")

    parsed_text: tuple[str, tuple[bool, JSON, str]] | None
    """The text and what `scorewire.core.values.output_json` made of it, once asked."""

    def __init__(
        self,
        text: str = "",
        value: JSON = None,
        metadata: dict[str, JSON] | None = None,
    ) -> None:
        self.text = text
        self.value = value
        self.metadata = metadata if metadata is not None else {}
        self.parsed_text = None

    def __repr__(self) -> str:
        return f"Output(text={self.text[:40]!r})"
