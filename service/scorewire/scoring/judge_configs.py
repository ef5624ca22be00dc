"""What judge configuration a judge-backed check of an Agreement or Calibrate request used.

A check names one judge (`model`), a panel (`judges`, `panel`) or a cascade (`cascade`):
its report and the kappa gauge's `judge_model` label name the whole configuration
(`scorewire.judge.several.describe_judges`), so a panel's agreement is never reported as
the default judge's. A level check's scale (`scorewire.checks.levels`) is read from the
same parameters, for Calibrate's proposed pass level.

The parameters come from the request's `checks` (scored now) or from a recorded run's
suite text (by check name, else by type).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scorewire.checks.levels import level_scale
from scorewire.judge.several import describe_judges
from scorewire.suites.checkllm import is_checkllm
from scorewire.suites.checkllm_sections import parse_judge


@dataclass(frozen=True, slots=True)
class JudgeConfig:
    """How one check judged."""

    judge_model: str
    """`backend:model`, `panel(majority: a, b, c)` or `cascade(a → b)`."""
    scale: int | None
    """Levels of its scale; None when it is no level check."""


def judge_config(
    check_type: str, params: Mapping[str, Any] | None, describe: Callable[[Any], str]
) -> JudgeConfig:
    """The configuration of a check of `check_type` with these raw parameters (None: not
    known, so the default judge and no parameter-set scale)."""
    return JudgeConfig(describe_judges(params or {}, describe), level_scale(check_type, params))


def suite_params(suite: str) -> dict[str, dict[str, Any]]:
    """Each check's parameters as the recorded suite text gives them (by check name, else
    by type); empty when the suite cannot be read or lists no checks.

    A checkllm suite names its checks by assertion type (the first assertion of a type
    speaks for the type) and gives a judge check the file's `judge:` as its `model`
    unless it names its own judge, panel or cascade, as the suite's loader does.
    """
    try:
        doc = json.loads(suite)
    except ValueError:
        try:
            import yaml

            doc = yaml.safe_load(suite)
        except yaml.YAMLError:  # a suite we cannot read names no judge
            return {}
    if is_checkllm(doc):
        return _checkllm_params(doc)
    checks = doc.get("checks") if isinstance(doc, dict) else None
    out: dict[str, dict[str, Any]] = {}
    for c in checks if isinstance(checks, list) else []:
        if not isinstance(c, dict):
            continue
        params = c.get("params")
        name = c.get("name") or c.get("type")
        if isinstance(name, str):
            out.setdefault(name, params if isinstance(params, dict) else c)
    return out


def _checkllm_params(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The parameters of each assertion type of a checkllm document."""
    model = parse_judge(doc.get("judge"), []).model_param()
    tests = doc.get("tests")
    out: dict[str, dict[str, Any]] = {}
    for test in tests if isinstance(tests, list) else []:
        asserts = test.get("assert") if isinstance(test, dict) else None
        for a in asserts if isinstance(asserts, list) else []:
            kind = a.get("type") if isinstance(a, dict) else None
            if not isinstance(kind, str) or kind in out:
                continue
            params = {k: v for k, v in a.items() if k != "type"}
            if model is not None and not params.keys() & {"model", "judges", "cascade"}:
                params["model"] = model
            out[kind] = params
    return out
