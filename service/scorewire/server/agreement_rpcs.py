"""LabelService.Agreement and .Calibrate: score now or read a run, pair with labels, convert.

Without `run_id` the cases are scored by the ScoringService's machinery (`score_now`: the
same limits, verdict cache and budgets as RunSuite). With `run_id` the recorded run's
judge-backed scores are read from the run store instead (`recorded_pairs`: no judge
call), the run seen as RunService.GetRun sees it (another tenant's run is NOT_FOUND).
The pairing and the figures are the domain's (`scorewire.labels.figures`). Labels are
read as ListLabels reads them, narrowed to what the caller may see.

Nothing here holds the event loop for long, whatever the request's size: cases are read
a page at a time (a recorded run `CHUNKS_PER_READ` chunks at a time), their labels in
one store call per `OUTPUTS_PER_CALL` outputs, and the per-case Python (decoding, hashing,
pairing) runs in slices that let other calls through (`Pacer`); the figures (the sorted
threshold sweep, the bootstrap) are numpy on a worker thread, which numpy lets go of the
GIL for. What a request may read is bounded before it is read: `max_agreement_cases`
cases, `max_calibration_thresholds` thresholds.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import grpc
from google.protobuf import json_format
from scorewire.core.errors import FieldViolation, join_path
from scorewire.core.model import Score, ScoreError, Spread
from scorewire.core.pacing import Pacer
from scorewire.core.registry import REGISTRY
from scorewire.engine.runner import CaseResult, Plan
from scorewire.labels.figures import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_DISAGREEMENTS,
    DEFAULT_RESAMPLES,
    KEPT_DISAGREEMENTS,
    Agreement,
    Calibration,
    NoPairs,
    Paired,
    Pairing,
    agreement,
    calibrate,
    candidate_thresholds,
)
from scorewire.labels.label_model import (
    DEFAULT_CHECK,
    OUTPUTS_PER_CALL,
    Label,
    LabelQuery,
    LabelStore,
    LabelsUnavailable,
    labelled_text,
    latest_per_labeller,
    output_hash,
)
from scorewire.runs import Chunk, RunRecorder, RunsUnavailable, iter_chunks
from scorewire.scoring.judge_configs import judge_config, suite_params
from scorewire.scoring.recorded import json_value, read_cases
from scorewire.server.run_records import visible_run
from scorewire.server.security import Principal
from scorewire.server.status import (
    RequestRejected,
    invalid_argument,
    rejection,
    resource_exhausted,
    unavailable,
)
from scorewire.v1 import labels_pb2 as pb
from scorewire.v1 import scoring_pb2

Context = grpc.aio.ServicerContext[Any, Any]

MAX_DISAGREEMENTS = KEPT_DISAGREEMENTS
"""Most disagreements one check may list."""
RESAMPLES_SETTING = "max_bootstrap_resamples"
CASES_SETTING = "max_agreement_cases"
THRESHOLDS_SETTING = "max_calibration_thresholds"
PAGE_CASES = 4 * OUTPUTS_PER_CALL
"""Cases paired at once: their labels are read (`OUTPUTS_PER_CALL` a call) and then
they are matched, so a page is what the request holds besides its pairs' numbers."""
LONG_TEXT_CHARS = 1 << 18
"""An output at least this long is hashed on a thread (hashlib lets go of the GIL)."""


class Scorer(Protocol):
    """What Agreement needs of the ScoringService."""

    async def score_now(
        self,
        checks: Sequence[scoring_pb2.CheckSpec],
        cases: Sequence[scoring_pb2.Case],
        context: Context,
        budget_usd: float | None,
    ) -> tuple[Plan, list[CaseResult]]:
        """Score the cases with the checks, results in case order."""

    def describe_judge(self, model: Any) -> str:
        """`backend:model` of a check's `model:` parameter."""


class AgreementObserver(Protocol):
    """Where the latest kappa of each check goes (the metrics)."""

    def observe_agreement(
        self, check: str, judge_model: str, kappa: float | None, pairs: int
    ) -> None:
        """Record one check's latest agreement."""


@dataclass(frozen=True, slots=True)
class Options:
    """Validated AgreementOptions."""

    resamples: int
    seed: int
    confidence: float
    max_disagreements: int


@dataclass(slots=True)
class Judged:
    """One judge-backed check of the request and what it paired."""

    name: str
    type: str
    judge_model: str
    """The judge configuration (`server.judge_configs`): one model, a panel or a cascade."""
    paired: Paired
    scale: int | None = None
    """Levels of a level check's scale (for the proposed pass level), else None."""


@dataclass(slots=True)
class _Output:
    """One case as pairing reads it: what identifies its output for labels, and the
    scores of the judged checks (by their slot in the request's list of pairings)."""

    sample_id: str
    text: str
    digest: str
    scores: list[tuple[int, Score]]


def failed_precondition(message: str, field: str = "") -> RequestRejected:
    """FAILED_PRECONDITION: the request is well-formed but there is nothing to measure."""
    violations = [FieldViolation(field, message)] if field else []
    return RequestRejected(grpc.StatusCode.FAILED_PRECONDITION, message, violations)


def options_from_pb(msg: pb.AgreementOptions, path: str, max_resamples: int) -> Options:
    """The options with defaults filled in; INVALID_ARGUMENT / RESOURCE_EXHAUSTED naming
    the field."""
    violations: list[FieldViolation] = []
    if msg.resamples < 0:
        violations.append(FieldViolation(join_path(path, "resamples"), "must be 0 or more"))
    confidence = msg.confidence or DEFAULT_CONFIDENCE
    if not 0 < confidence < 1:  # also NaN
        violations.append(
            FieldViolation(join_path(path, "confidence"), "must be strictly between 0 and 1")
        )
    if not 0 <= msg.max_disagreements <= MAX_DISAGREEMENTS:
        violations.append(
            FieldViolation(
                join_path(path, "max_disagreements"), f"must be 0 to {MAX_DISAGREEMENTS}"
            )
        )
    if violations:
        raise invalid_argument(violations)
    resamples = msg.resamples or DEFAULT_RESAMPLES
    if resamples > max_resamples:
        raise resource_exhausted(
            join_path(path, "resamples"),
            f"{resamples} resamples exceed {RESAMPLES_SETTING} ({max_resamples})",
        )
    return Options(
        resamples=resamples,
        seed=msg.seed,
        confidence=confidence,
        max_disagreements=msg.max_disagreements or DEFAULT_MAX_DISAGREEMENTS,
    )


def label_query(msg: pb.LabelFilter, path: str) -> LabelQuery:
    """The label filter as a query (the `default` label check when none is named)."""
    violations = [
        FieldViolation(join_path(path, f), "must not contain NUL characters")
        for f in ("check", "labeller", "tenant")
        if "\x00" in getattr(msg, f)
    ]
    if violations:
        raise invalid_argument(violations)
    return LabelQuery(check=msg.check or DEFAULT_CHECK, labeller=msg.labeller, tenant=msg.tenant)


async def _labels_of(
    store: LabelStore, query: LabelQuery, keys: Sequence[tuple[str, str]], pacer: Pacer
) -> dict[tuple[str, str], list[Label]]:
    """The counting labels of each (sample id, output hash) that has any: one store call
    per `OUTPUTS_PER_CALL` distinct outputs."""
    wanted = list(dict.fromkeys(keys))
    found: dict[tuple[str, str], list[Label]] = {}
    try:
        for start in range(0, len(wanted), OUTPUTS_PER_CALL):
            listed = await store.labels_of_outputs(query, wanted[start : start + OUTPUTS_PER_CALL])
            grouped: dict[tuple[str, str], list[Label]] = {}
            for label in listed:
                grouped.setdefault((label.sample_id, label.output_hash), []).append(label)
            for key, labels in grouped.items():
                found[key] = latest_per_labeller(labels)
            await pacer.tick()
    except LabelsUnavailable as err:
        raise RequestRejected(grpc.StatusCode.UNAVAILABLE, f"{err}: retry later") from None
    return found


async def _hash(text: str) -> str:
    """`output_hash(text)`, a long text's on a thread so the event loop goes on."""
    if len(text) < LONG_TEXT_CHARS:
        return output_hash(text)
    return await asyncio.to_thread(output_hash, text)


async def _pair_page(
    page: Sequence[_Output],
    pairings: Sequence[Pairing],
    store: LabelStore,
    query: LabelQuery,
    pacer: Pacer,
) -> None:
    """Read the labels of a page of outputs and pair each judged score with them (an
    output without a sample id has none: labels name their sample)."""
    keys = [(o.sample_id, o.digest) for o in page if o.sample_id]
    labels = await _labels_of(store, query, keys, pacer)
    for o in page:
        found = labels.get((o.sample_id, o.digest), []) if o.sample_id else []
        for slot, score in o.scores:
            pairings[slot].add(o.sample_id, o.text, score, found)
        await pacer.tick()


async def judge_pairs(
    request: pb.AgreementRequest,
    path: str,
    context: Context,
    *,
    scorer: Scorer,
    store: LabelStore,
    query: LabelQuery,
    max_cases: int,
) -> list[Judged]:
    """Score the request's cases now and pair every chosen judge-backed check with labels;
    RESOURCE_EXHAUSTED naming `max_agreement_cases` for more cases than it allows."""
    if not request.cases:
        raise invalid_argument([FieldViolation(join_path(path, "cases"), "must hold a case")])
    if len(request.cases) > max_cases:
        raise resource_exhausted(
            join_path(path, "cases"),
            f"{len(request.cases)} cases exceed {CASES_SETTING} ({max_cases})",
        )
    if not request.checks:
        raise invalid_argument(
            [FieldViolation(join_path(path, "checks"), "must hold a judge-backed check")]
        )
    budget = request.budget_usd if request.HasField("budget_usd") else None
    try:
        plan, results = await scorer.score_now(request.checks, request.cases, context, budget)
    except Exception as failed:
        err = rejection(failed)  # a domain error (a bad spec, a limit) as its status
        if err is None:
            raise
        if not path:
            raise err from None
        moved = [FieldViolation(join_path(path, v.field), v.description) for v in err.violations]
        if err.code == grpc.StatusCode.INVALID_ARGUMENT:
            raise invalid_argument(moved) from None
        raise RequestRejected(err.code, err.message, moved) from None
    chosen = [
        (i, c)
        for i, c in enumerate(plan.checks)
        if c.check_type.uses_judge and (not request.check or c.name == request.check)
    ]
    if not chosen:
        field, why = (
            ("check", f"{request.check!r} is not the name of a judge-backed check of `checks`")
            if request.check
            else ("checks", "none of the checks is judge-backed: nothing to compare with labels")
        )
        raise invalid_argument([FieldViolation(join_path(path, field), why)])
    pacer = Pacer()
    pairings = [Pairing() for _ in chosen]
    page: list[_Output] = []
    for r in results:
        case = request.cases[r.index]
        text = labelled_text(case.output.text, _value(case.output))
        scores = [(slot, r.scores[i]) for slot, (i, _) in enumerate(chosen)]
        page.append(_Output(case.sample.id, text, await _hash(text), scores))
        if len(page) == PAGE_CASES:
            await _pair_page(page, pairings, store, query, pacer)
            page = []
        await pacer.tick()
    await _pair_page(page, pairings, store, query, pacer)
    out = []
    for (i, check), pairing in zip(chosen, pairings, strict=True):
        params = (
            json_format.MessageToDict(request.checks[i].params) if i < len(request.checks) else None
        )
        config = judge_config(check.type, params, scorer.describe_judge)
        out.append(
            Judged(check.name, check.type, config.judge_model, pairing.paired(), config.scale)
        )
    return out


def _score_from_pb(m: scoring_pb2.Score) -> Score:
    """A recorded score message as the domain's score (its error and spread kept)."""
    error = ScoreError(m.error.code, m.error.message) if m.HasField("error") else None
    spread = (
        Spread(tuple(m.spread.values), m.spread.agreement)
        if m.HasField("spread") and m.spread.values
        else None
    )
    return Score(
        m.value,
        m.passed,
        m.reason,
        cost_usd=m.cost_usd,
        latency_ms=m.latency_ms,
        error=error,
        cached=m.cached,
        unpriced=m.unpriced,
        skipped=m.skipped,
        spread=spread,
    )


async def recorded_pairs(
    request: pb.AgreementRequest,
    path: str,
    *,
    recorder: RunRecorder,
    who: Principal | None,
    describe_judge: Any,
    store: LabelStore,
    query: LabelQuery,
    max_cases: int,
) -> list[Judged]:
    """Pair the recorded run's judge-backed scores with labels; no check is scored again.

    NOT_FOUND naming `run_id` for a run that does not exist or that `who` may not see;
    FAILED_PRECONDITION when it recorded no judge-backed score; RESOURCE_EXHAUSTED when it
    holds more cases than `max_agreement_cases` (refused before reading any when the run
    says so, else as soon as one more is read: a run still recording grows).
    """
    run_field = join_path(path, "run_id")
    extra = [
        FieldViolation(join_path(path, f), "must be empty when run_id is set: the run's "
                       "recorded cases and scores are compared")
        for f in ("cases", "checks")
        if getattr(request, f)
    ]  # fmt: skip
    if request.HasField("budget_usd"):
        extra.append(
            FieldViolation(
                join_path(path, "budget_usd"),
                "must be unset when run_id is set: a recorded run makes no judge call",
            )
        )
    if extra:
        raise invalid_argument(extra)
    run_id = request.run_id
    run = await visible_run(recorder, run_id, who)
    if run is None:
        raise RequestRejected(
            grpc.StatusCode.NOT_FOUND,
            f"no run {run_id!r}",
            [FieldViolation(run_field, f"no run {run_id!r}")],
        )
    if run.results > max_cases:
        raise resource_exhausted(
            run_field,
            f"run {run_id!r} holds {run.results} cases, more than {CASES_SETTING} ({max_cases})",
        )
    pacer = Pacer()
    slots: dict[str, int] = {}
    types: dict[str, str] = {}
    judged_by: dict[str, str] = {}  # check -> the one judge its recorded scores name
    pairings: list[Pairing] = []
    page: list[_Output] = []
    read = 0
    try:
        async for _, chunk in iter_chunks(recorder.store, run_id):
            for case, result in _recorded_cases(chunk):
                read += 1
                if read > max_cases:
                    raise resource_exhausted(
                        run_field,
                        f"run {run_id!r} holds more than {CASES_SETTING} ({max_cases}) cases",
                    )
                scores = []
                for m in result.scores:
                    check_type = REGISTRY.get(m.type)
                    if check_type is None or not check_type.uses_judge:
                        continue
                    if request.check and m.name != request.check:
                        continue
                    if m.name not in slots:
                        slots[m.name] = len(pairings)
                        types[m.name] = m.type
                        pairings.append(Pairing())
                    if m.name not in judged_by and len(m.judge.models) == 1:
                        judged_by[m.name] = m.judge.models[0]  # who judged, as recorded
                    scores.append((slots[m.name], _score_from_pb(m)))
                if scores:
                    text = labelled_text(case.output.text, json_value(case.output, "value"))
                    page.append(_Output(result.sample_id, text, await _hash(text), scores))
                await pacer.tick()
            if len(page) >= PAGE_CASES:
                await _pair_page(page, pairings, store, query, pacer)
                page = []
    except RunsUnavailable as err:
        raise unavailable(err) from None
    await _pair_page(page, pairings, store, query, pacer)
    if not slots:
        why = (
            f"run {run_id!r} recorded no judge-backed score named {request.check!r}"
            if request.check
            else f"run {run_id!r} recorded no judge-backed score: nothing to compare with labels"
        )
        raise failed_precondition(why, join_path(path, "check" if request.check else "run_id"))
    params = suite_params(run.suite)
    order = {name: i for i, name in enumerate(run.checks)}
    out = []
    for name in sorted(slots, key=lambda n: (order.get(n, len(order)), n)):
        config = judge_config(
            types[name],
            params.get(name) or params.get(types[name]),
            _recorded_or(judged_by.get(name), describe_judge),
        )
        paired = pairings[slots[name]].paired()
        out.append(Judged(name, types[name], config.judge_model, paired, config.scale))
    return out


def _recorded_or(recorded: str | None, describe: Any) -> Any:
    """`describe`, except that a check naming no model is described as the judge its
    recorded scores name (the default then, not the server's default now)."""

    def described(model: Any) -> str:
        return recorded if model is None and recorded else str(describe(model))

    return described


def _recorded_cases(chunk: Chunk) -> list[tuple[scoring_pb2.Case, scoring_pb2.CaseResult]]:
    """A recorded chunk's cases as sent, each with its result: only what pairing reads is
    decoded (not the cases' input and expected, as the run's own readers do)."""
    cases = read_cases(chunk.cases)
    results = scoring_pb2.RunSuiteResponse.FromString(chunk.results).results.results
    return [(cases[i] if i < len(cases) else scoring_pb2.Case(), r) for i, r in enumerate(results)]


def _value(output: scoring_pb2.Output) -> Any:
    if not output.HasField("value"):
        return None
    return json_format.MessageToDict(output.value)


def _no_pairs(j: Judged, err: NoPairs, path: str) -> RequestRejected:
    return failed_precondition(f"check {j.name!r}: {err}", join_path(path, "cases"))


async def agreements(judged: Sequence[Judged], options: Options, path: str) -> list[Agreement]:
    """The figures of every judged check (on a thread: the bootstrap is numpy);
    FAILED_PRECONDITION for one with zero pairs."""
    out = []
    for j in judged:
        try:
            out.append(
                await asyncio.to_thread(
                    agreement,
                    j.paired,
                    resamples=options.resamples,
                    seed=options.seed,
                    confidence=options.confidence,
                    max_disagreements=options.max_disagreements,
                )
            )
        except NoPairs as err:
            raise _no_pairs(j, err, path) from None
    return out


def thresholds_from_pb(values: Sequence[float], max_thresholds: int) -> list[float]:
    """Candidate thresholds, each finite in 0..1; INVALID_ARGUMENT naming the bad one,
    RESOURCE_EXHAUSTED naming `max_calibration_thresholds` for too many."""
    if len(values) > max_thresholds:
        raise resource_exhausted(
            "thresholds",
            f"{len(values)} thresholds exceed {THRESHOLDS_SETTING} ({max_thresholds})",
        )
    bad = [
        FieldViolation(join_path("thresholds", i), "must be a number from 0 to 1")
        for i, v in enumerate(values)
        if not (math.isfinite(v) and 0 <= v <= 1)
    ]
    if bad:
        raise invalid_argument(bad)
    return list(values)


async def calibrations(
    judged: Sequence[Judged], thresholds: Sequence[float], max_thresholds: int, path: str
) -> list[Calibration]:
    """The calibration of every judged check (the sweep on a thread: it is numpy);
    FAILED_PRECONDITION for one with zero pairs, RESOURCE_EXHAUSTED naming
    `max_calibration_thresholds` when no thresholds were sent and the judge gave more
    distinct values than that."""
    out = []
    for j in judged:
        candidates = await asyncio.to_thread(candidate_thresholds, j.paired, thresholds)
        if j.paired.pairs and len(candidates) > max_thresholds:
            raise resource_exhausted(
                "thresholds",
                f"check {j.name!r}: the judge gave {len(candidates)} distinct values, more "
                f"than {THRESHOLDS_SETTING} ({max_thresholds}) thresholds to try: send the "
                "thresholds to try",
            )
        try:
            out.append(await asyncio.to_thread(calibrate, j.paired, candidates, j.scale))
        except NoPairs as err:
            raise _no_pairs(j, err, path) from None
    return out


# --- to the wire ---------------------------------------------------------------------------------
