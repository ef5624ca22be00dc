"""One check compiled and run in process: the helpers of the check-family tables.

    got = score("safety.forbidden", {"phrases": ["kill"]}, "skills")
    assert "at least 1" in load_errors("safety.no_pii", {"kinds": []})["checks[0].params.kinds"]

The check is compiled as the first structured check of a request (`checks[0]`), so
load errors carry the paths a caller would see (`checks[0].params.kinds`).
"""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.errors import SpecError
from scorewire.core.model import Output, Sample, Score
from scorewire.engine.execute import run_check_sync
from scorewire.engine.spec import CheckSpec, CompiledCheck, compile_check

PATH = "checks[0]"
"""Where the check sits in its request: the prefix of every load-error field."""


def compile_one(type_: str, params: dict[str, Any]) -> CompiledCheck:
    """Compile one check spec at `checks[0]` (raises SpecError for a bad one)."""
    return compile_check(CheckSpec(type=type_, params=params), PATH)


def score(
    type_: str,
    params: dict[str, Any],
    text: str = "",
    expected: Any = None,
    *,
    value: Any = None,
    output: Output | None = None,
) -> Score:
    """Run one check on sample `s1` (with `expected`) and `output`, else Output(text, value)."""
    return run_check_sync(
        compile_one(type_, params),
        Sample("s1", expected=expected),
        output if output is not None else Output(text, value),
        EMPTY_CONTEXT,
    )


def load_errors(type_: str, params: dict[str, Any]) -> dict[str, str]:
    """The violations of a spec that must fail to load, as {field: description}.

    Two violations of one field are joined with "; ", so a fragment of either is found."""
    with pytest.raises(SpecError) as info:
        compile_one(type_, params)
    out: dict[str, str] = {}
    for v in info.value.violations:
        out[v.field] = f"{out[v.field]}; {v.description}" if v.field in out else v.description
    return out
