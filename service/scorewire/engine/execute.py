"""Running one compiled check on one output: modifiers, timeouts, and never a crash.

"The check ran and failed" is a Score; so is "the check could not run" (with `error`).
Nothing a check does escapes as an exception to the runner.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable
from typing import cast

from scorewire.core.context import CheckContext, Extraction
from scorewire.core.judged import close_trail, mark_of, open_trail
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.engine.spec import CompiledCheck

log = logging.getLogger(__name__)

DEFAULT_CHECK_TIMEOUT_S = 120.0
"""Per-check timeout when the caller sets none; judge calls with retries fit in it."""


def _crashed(cc: CompiledCheck, err: BaseException) -> Score:
    if isinstance(err, RecursionError):
        # Built-in checks recurse only along the structure of what they read, so this is
        # an output (or reference) nested deeper than Python can follow: unreadable input.
        return Score.fail_with_error(
            ErrorCode.INVALID_OUTPUT,
            f"check {cc.name!r} cannot read the output: it nests too deeply",
        )
    if cc.check_type.family == "custom":
        # Custom checks are the server owner's code; their message helps the owner.
        msg = f"check {cc.name!r} raised {type(err).__name__}: {err}"
    else:
        log.exception("built-in check %s raised", cc.type, exc_info=err)
        msg = f"check {cc.name!r} failed unexpectedly; see the server log"
    return Score.fail_with_error(ErrorCode.CHECK_FAILED, msg)


def _condition_not_met(cc: CompiledCheck, pred: Score) -> Score:
    assert cc.when is not None
    return Score(
        1.0,
        True,
        f"condition not met, check not applied (when {cc.when.name}: {pred.reason})",
        cost_usd=pred.cost_usd,
        skipped=True,
    )


def _condition_errored(cc: CompiledCheck, pred: Score) -> Score:
    assert cc.when is not None and pred.error is not None
    msg = f"condition {cc.when.name!r} could not be evaluated: {pred.error.message}"
    return Score.fail_with_error(ErrorCode.CONDITION_ERROR, msg, cost_usd=pred.cost_usd)


def run_check_sync(cc: CompiledCheck, sample: Sample, output: Output, ctx: CheckContext) -> Score:
    """Run a check that needs no event loop (`not cc.is_async`)."""
    start = time.perf_counter()
    if cc.when is not None:
        pred = run_check_sync(cc.when, sample, output, ctx)
        if pred.error is not None:
            return _condition_errored(cc, pred)
        if not pred.passed:
            return _condition_not_met(cc, pred)
    try:
        score: Score = cc.fn(sample, output, ctx)  # type: ignore[assignment]  # not is_async
    except Exception as err:
        score = _crashed(cc, err)
    score.latency_ms = (time.perf_counter() - start) * 1000.0
    return score


async def _extract(
    cc: CompiledCheck, sample: Sample, output: Output, ctx: CheckContext
) -> tuple[Output, float, bool] | Score:
    assert cc.extractor is not None
    extract = getattr(ctx.judge, "extract", None)
    if extract is None:
        return Score.fail_with_error(
            ErrorCode.EXTRACTION_FAILED,
            "the extractor needs a judge and none is configured",
        )
    ext = cast(Extraction, await extract(cc.extractor, sample, output, ctx, cc.examples))
    if ext.error_message is not None:
        return Score.fail_with_error(
            ErrorCode.EXTRACTION_FAILED,
            f"extraction of {cc.extractor!r} failed: {ext.error_message}",
            cost_usd=ext.cost_usd,
        )
    extracted = Output(text=ext.text, value=output.value, metadata=output.metadata)
    return extracted, ext.cost_usd, ext.cached


async def _run_inner(cc: CompiledCheck, sample: Sample, output: Output, ctx: CheckContext) -> Score:
    extra_cost = 0.0
    if cc.when is not None:
        pred = await run_check(cc.when, sample, output, ctx)
        if pred.error is not None:
            return _condition_errored(cc, pred)
        if not pred.passed:
            return _condition_not_met(cc, pred)
        extra_cost += pred.cost_usd
    if cc.extractor is not None:
        got = await _extract(cc, sample, output, ctx)
        if isinstance(got, Score):
            got.cost_usd += extra_cost
            return got
        output, ext_cost, _ = got
        extra_cost += ext_cost
    if cc.fn_is_async:
        score = await cast(Awaitable[Score], cc.fn(sample, output, ctx))
    else:
        score = cast(Score, cc.fn(sample, output, ctx))
    score.cost_usd += extra_cost
    return score


async def _judged(cc: CompiledCheck, sample: Sample, output: Output, ctx: CheckContext) -> Score:
    """The check's score, marked with the judges it asked (`scorewire.core.judged`)."""
    if ctx.judge is None or not (cc.fn_is_async or cc.extractor is not None):
        return await _run_inner(cc, sample, output, ctx)  # no judge can be asked
    trail, token = open_trail()
    try:
        score = await _run_inner(cc, sample, output, ctx)
    finally:
        close_trail(token)
    score.judge = mark_of(trail)
    return score


async def run_check(
    cc: CompiledCheck,
    sample: Sample,
    output: Output,
    ctx: CheckContext,
    timeout_s: float = DEFAULT_CHECK_TIMEOUT_S,
) -> Score:
    """Run any check under the per-check timeout and the context's deadline."""
    start = time.perf_counter()
    remaining = ctx.remaining()
    limit = timeout_s if remaining is None else min(timeout_s, remaining)
    if limit <= 0:
        return Score.fail_with_error(
            ErrorCode.DEADLINE_EXCEEDED, "the request deadline expired before the check ran"
        )
    try:
        # A timeout scope, not `wait_for`: that ran the check as a task of its own, and
        # starting it and hearing it finish took three turns of the event loop, each
        # waiting behind every ready callback (~4 ms a judge check at concurrency 32).
        async with asyncio.timeout(limit):
            score = await _judged(cc, sample, output, ctx)
    except TimeoutError:
        if remaining is not None and remaining <= timeout_s:
            score = Score.fail_with_error(
                ErrorCode.DEADLINE_EXCEEDED, "the request deadline expired during the check"
            )
        else:
            score = Score.fail_with_error(
                ErrorCode.TIMEOUT, f"the check ran past its {timeout_s:g} s timeout"
            )
    except asyncio.CancelledError:
        raise
    except Exception as err:
        score = _crashed(cc, err)
    score.latency_ms = (time.perf_counter() - start) * 1000.0
    return score
