"""The sections of a checkllm document around its tests: `judge:`, `settings:`,
`prompts:` and `providers:`.

Each parser returns what loads and adds every problem to the caller's list, each with its
path (`settings.threshold`, `providers[1]`), so the loader reports them all at once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from scorewire.core.errors import FieldViolation, join_path
from scorewire.generation.providers import ProviderRef, parse_provider
from scorewire.judge.models import parse_model
from scorewire.suites.checkllm_suite import CheckllmSettings, JudgeConfig

_JUDGE_KEYS = frozenset({"backend", "model"})
_JUDGE_BACKENDS = ("openai", "anthropic", "gemini", "auto")
_SETTINGS_KEYS = frozenset(
    {"budget", "threshold", "parallel", "cache", "concurrency", "fresh_judges"}
)


def parse_judge(raw: object, violations: list[FieldViolation]) -> JudgeConfig:
    """The `judge:` section, or the default judge when it has a problem (in `violations`)."""
    if raw is None:
        return JudgeConfig()
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation("judge", "must be a mapping {backend, model}"))
        return JudgeConfig()
    violations.extend(
        FieldViolation(join_path("judge", str(k)), "unknown key (allowed: backend, model)")
        for k in raw
        if k not in _JUDGE_KEYS
    )
    backend = raw.get("backend", "auto")
    model = raw.get("model", "")
    ok = True
    if backend not in _JUDGE_BACKENDS:
        violations.append(
            FieldViolation("judge.backend", f"must be one of {', '.join(_JUDGE_BACKENDS)}")
        )
        ok = False
    if model is None:
        model = ""
    if not isinstance(model, str):
        violations.append(FieldViolation("judge.model", "must be a string"))
        ok = False
    if not ok:
        return JudgeConfig()
    config = JudgeConfig(str(backend), model.strip())
    if config.backend == "gemini" and not config.model:
        violations.append(
            FieldViolation("judge.model", "the gemini judge needs a model (gemini-2.5-flash, ...)")
        )
        return JudgeConfig()
    try:
        parse_model(config.model_param())
    except ValueError as err:
        violations.append(FieldViolation("judge.model", str(err)))
        return JudgeConfig()
    return config


def _number(
    raw: Mapping[str, Any],
    key: str,
    violations: list[FieldViolation],
    *,
    low: float,
    high: float | None,
    what: str,
) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)  # YAML's .nan and .inf
        or value < low
        or (high is not None and value > high)
    ):
        violations.append(FieldViolation(join_path("settings", key), what))
        return None
    return float(value)


def parse_settings(raw: object, violations: list[FieldViolation]) -> CheckllmSettings:
    """The `settings:` section; a bad value goes to `violations` and keeps its default."""
    s = CheckllmSettings()
    if raw is None:
        return s
    if not isinstance(raw, Mapping):
        violations.append(FieldViolation("settings", "must be a mapping"))
        return s
    violations.extend(
        FieldViolation(
            join_path("settings", str(k)),
            f"unknown key (allowed: {', '.join(sorted(_SETTINGS_KEYS))})",
        )
        for k in raw
        if k not in _SETTINGS_KEYS
    )
    budget = _number(raw, "budget", violations, low=0, high=None, what="must be dollars ≥ 0")
    if budget is not None:
        s.budget = budget
    threshold = _number(raw, "threshold", violations, low=0, high=1, what="must be in 0..1")
    if threshold is not None:
        s.threshold = threshold
    for key in ("parallel", "cache", "fresh_judges"):
        value = raw.get(key)
        if value is not None:
            if isinstance(value, bool):
                setattr(s, key, value)
            else:
                violations.append(
                    FieldViolation(join_path("settings", key), "must be true or false")
                )
    conc = raw.get("concurrency")
    if conc is not None:
        if isinstance(conc, bool) or not isinstance(conc, int) or not 1 <= conc <= 1024:
            violations.append(FieldViolation("settings.concurrency", "must be an integer 1..1024"))
        else:
            s.concurrency = conc
    return s


def parse_prompts(data: Mapping[str, Any], violations: list[FieldViolation]) -> list[str]:
    """The `prompts:` templates; none when there are none or any is bad (in `violations`)."""
    raw = data.get("prompts")
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        violations.append(FieldViolation("prompts", "must be a non-empty list of templates"))
        return []
    out: list[str] = []
    for j, p in enumerate(raw):
        if not isinstance(p, str) or not p.strip():
            violations.append(FieldViolation(join_path("prompts", j), "must be a non-empty string"))
        else:
            out.append(p)
    return out if len(out) == len(raw) else []


def parse_providers(raw: object, violations: list[FieldViolation]) -> list[ProviderRef]:
    """The `providers:` list; none when there is none, or when any is bad or listed twice
    (in `violations`)."""
    if raw is None:
        return []
    if not isinstance(raw, list) or not raw:
        violations.append(FieldViolation("providers", "must be a non-empty list of backend:model"))
        return []
    out: list[ProviderRef] = []
    seen: set[str] = set()
    for i, p in enumerate(raw):
        where = join_path("providers", i)
        if not isinstance(p, str):
            violations.append(FieldViolation(where, "must be a string backend:model"))
            continue
        try:
            ref = parse_provider(p)
        except ValueError as err:
            violations.append(FieldViolation(where, str(err)))
            continue
        if ref.id in seen:
            violations.append(FieldViolation(where, f"{ref.id} is listed twice"))
            continue
        seen.add(ref.id)
        out.append(ref)
    return out if len(out) == len(raw) else []
