"""Which judges a check asks: one (`model`), a panel (`judges`) or a cascade (`cascade`).

`judges_from` binds the parameters of `scorewire.judge.panels.PanelParams` once, when the
check loads, and refuses what does not go together, naming the field: `judges` or
`cascade` with `model`, both at once, a panel's options without a panel, a cascade's
without a cascade.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from scorewire.core.registry import ParamError
from scorewire.judge.cascades import Cascade, cascade_from
from scorewire.judge.panels import Panel, PanelParams, panel_from

Several = Panel | Cascade
"""A check's several judges: each asks its judges with the same `ask`."""


def judges_from(p: PanelParams, model: str | None, *, bar: float, step: float) -> Several | None:
    """The panel or cascade the parameters name, or None for one judge (`model`).

    `bar` is the value at which one judge passes (the check's threshold, else its pass
    level: the bar the engine applies); `step` one level of the check's values.
    """
    named = "judges" if p.judges is not None else "cascade" if p.cascade is not None else None
    if named is None:
        for key in ("panel", "weights"):
            if getattr(p, key) is not None:
                raise ParamError(key, "applies to a panel only: name its `judges`")
        if p.audit_share is not None:
            raise ParamError("audit_share", "applies to a cascade only: name its `cascade`")
        if p.on_judge_error != "error":
            raise ParamError(
                "on_judge_error", "applies to a panel or cascade only: name its `judges`"
            )
        return None
    if model is not None and model.strip():
        raise ParamError(named, "give model or " + named + ", not both")
    if p.judges is not None and p.cascade is not None:
        raise ParamError("cascade", "give judges (a panel) or cascade, not both")
    if p.cascade is not None:
        for key in ("panel", "weights"):
            if getattr(p, key) is not None:
                raise ParamError(key, "applies to a panel only, not to a cascade")
        return cascade_from(p, bar, step)
    if p.audit_share is not None:
        raise ParamError("audit_share", "applies to a cascade only, not to a panel")
    return panel_from(p, bar)


def describe_judges(params: Mapping[str, Any], describe: Callable[[str | None], str]) -> str:
    """The judge configuration a check's raw parameters name, for reports and metric labels.

    One judge is `describe(model)` (`backend:model`, the default when unset); a panel is
    `panel(majority: a, b, c)` (its rule, default majority, each judge described; a
    weighted one `panel(weighted: a ×1, b ×2)`); a cascade `cascade(a → b)`, cheapest
    first (`cascade(a → b; audit 0.05)` with an audit share). Each judge asked several
    times says so: `openai:gpt-4o-mini (samples 3, mean)`, `panel(majority: a, b; samples
    3, median)`, `cascade(a → b; samples 3, mean)`. Those settings change
    what a configuration is worth, so two that differ in them are never reported as
    one. Parameters that do not parse as judges (a recorded suite this server would
    refuse) are described as written, never dropped.
    """
    judges, cascade = params.get("judges"), params.get("cascade")
    samples = _sampling(params)
    if isinstance(judges, list) and judges:
        rule = params.get("panel") if isinstance(params.get("panel"), str) else "majority"
        names = _each(judges, describe)
        weights = params.get("weights")
        if rule == "weighted" and isinstance(weights, list) and len(weights) == len(names):
            names = [
                f"{n} ×{w:g}" if isinstance(w, int | float) else n
                for n, w in zip(names, weights, strict=True)
            ]
        return f"panel({rule}: {', '.join(names)}{'; ' + samples if samples else ''})"
    if isinstance(cascade, list) and cascade:
        audit = params.get("audit_share")
        tail = f"; audit {audit:g}" if isinstance(audit, int | float) and audit > 0 else ""
        tail += f"; {samples}" if samples else ""
        return f"cascade({' → '.join(_each(cascade, describe))}{tail})"
    model = params.get("model")
    one = describe(model if isinstance(model, str) else None)
    return f"{one} ({samples})" if samples else one


def _sampling(params: Mapping[str, Any]) -> str:
    """`samples 3, median` when each judge is asked more than once (its aggregate, mean
    unless set), else empty: one sample is the plain configuration."""
    n = params.get("samples")  # a float when it came over gRPC (a Struct's number)
    if not isinstance(n, int | float) or isinstance(n, bool) or n != int(n) or n <= 1:
        return ""
    aggregate = params.get("aggregate")
    return f"samples {int(n)}, {aggregate if isinstance(aggregate, str) else 'mean'}"


def _each(names: Sequence[Any], describe: Callable[[str | None], str]) -> list[str]:
    return [describe(n) if isinstance(n, str) else str(n) for n in names]
