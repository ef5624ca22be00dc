"""Value → passed, once, for every check: thresholds and negation live here.

A family declares in the registry that its checks yield a value (`ThresholdRule`) or
that a flag inverts them (`negated_by`); its checks then only measure. `bind_pass_rule`
reads the spec's `threshold` (or the rule's default) and the flag when the spec is
compiled, and wraps the scoring function so that every result is decided the same way:

- a `Measurement` passes at value ≥ threshold (less the rule's slack), and its reason
  is its stem, the rule's phrase, and its tail;
- a negated result is inverted: value 1 − value, passed flipped, and the reason says
  which way (`the pattern matches but must not`, `..., as required`);
- an error score is left alone: an error is never a pass, negated or not.

A spec with neither (every deterministic check with its defaults) keeps its function
unwrapped, so the hot path pays nothing.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable
from typing import cast

from scorewire.core.context import CheckContext
from scorewire.core.model import Measurement, Output, Sample, Score
from scorewire.core.registry import CheckFn, CheckType, Params, ThresholdRule
from scorewire.core.twin import twin_of, with_twin


def _decider(
    rule: ThresholdRule | None, threshold: float | None, negate: bool
) -> Callable[[Score], Score]:
    phrase = rule.phrase if rule is not None else None
    bar = threshold - rule.slack if rule is not None and threshold is not None else None

    def decide(score: Score) -> Score:
        if score.error is not None:
            return score
        if bar is not None and isinstance(score, Measurement):
            assert phrase is not None and threshold is not None
            passed = score.value >= bar
            score.passed = passed
            if score.spread is not None:
                score.spread = score.spread.judged(lambda v: v >= bar, passed)
            score.reason = f"{score.stem}{phrase(score.value, passed, threshold)}{score.tail}"
        if negate:
            score.value = 1.0 - score.value
            score.reason += ", as required" if not score.passed else " but must not"
            score.passed = not score.passed
        return score

    return decide


def spec_threshold(check_type: CheckType, params: Params) -> float | None:
    """The threshold in force for one spec: its own, else the rule's default."""
    if check_type.threshold is None:
        return None
    own = cast(float | None, getattr(params, "threshold", None))
    return check_type.threshold.default if own is None else own


def bind_pass_rule(
    fn: CheckFn, fn_is_async: bool, check_type: CheckType, params: Params
) -> CheckFn:
    """`fn` with the type's threshold and negation applied, or `fn` itself when none is."""
    threshold = spec_threshold(check_type, params)
    flag = check_type.negated_by
    negate = flag is not None and not getattr(params, flag)
    if threshold is None and not negate:
        return fn
    decide = _decider(check_type.threshold, threshold, negate)

    if fn_is_async:
        afn = cast(Callable[[Sample, Output, CheckContext], Awaitable[Score]], fn)

        async def decided_async(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            return decide(await afn(sample, output, ctx))

        return decided_async

    sfn = cast(Callable[[Sample, Output, CheckContext], Score], fn)

    def decided(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        return decide(sfn(sample, output, ctx))

    twin = twin_of(fn)
    if twin is not None and threshold is None:
        # Negation alone: the native kernel applies it to its twin's verdicts as `decide`.
        with_twin(decided, dataclasses.replace(twin, negate=True))
    return decided
