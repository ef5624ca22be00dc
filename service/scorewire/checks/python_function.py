"""The deterministic check `python`: the caller's own function scores the output.

It takes a callable, so it exists in the Python API only; over the wire the server's
owner registers a custom check instead (`engine.custom`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, check_type
from scorewire.core.values import NUMBER_THRESHOLD, coerce_result, positional_arity

FAMILY = "deterministic"


# --- python ----------------------------------------------------------------------------


def _python_only(value: Any) -> Any:
    if isinstance(value, str) or not callable(value):
        raise PydanticCustomError(
            "python_api_only",
            "python checks exist only in the Python API; register a custom check on the "
            "server instead",
        )
    return value


class PythonParams(Params):
    """Parameters of `python`: a callable, so only the Python API can set it."""

    fn: Annotated[
        Callable[..., Any],
        BeforeValidator(_python_only),
        WithJsonSchema({"description": "A Python callable (Python API only)."}),
    ] = Field(description="fn(sample, output[, ctx]) returning a Score, a bool or 0..1.")
    threshold: float = Field(
        0.5, ge=0.0, le=1.0, description="A numeric result passes at or above this value."
    )


@check_type(
    "python",
    description="A Python function scores the output (Python API only).",
    family=FAMILY,
    params=PythonParams,
    threshold=NUMBER_THRESHOLD,
    in_process_only=True,
)
def build_python(p: PythonParams) -> CheckFn:
    """`python`: `fn(sample, output)` or `fn(sample, output, ctx)`, sync or async.

    It may return a Score, a bool (pass/fail) or a number in 0..1 (passing at `threshold`,
    default 0.5, or above, as custom checks do); anything else, or an exception, is an
    error score (`CHECK_FAILED`) naming the function, never a pass.
    """
    fn = p.fn
    name = getattr(fn, "__name__", type(fn).__name__)
    arity = positional_arity(fn)
    if arity is not None and arity not in (2, 3):
        raise ParamError("fn", f"{name} must take (sample, output) or (sample, output, ctx)")
    with_ctx = arity != 2

    def crashed(err: Exception) -> Score:
        return Score.fail_with_error(
            ErrorCode.CHECK_FAILED, f"{name} raised {type(err).__name__}: {err}"
        )

    if inspect.iscoroutinefunction(fn):

        async def python_async(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            try:
                result = await (fn(sample, output, ctx) if with_ctx else fn(sample, output))
            except Exception as err:  # the user's code: an error score, not a crash
                return crashed(err)
            return coerce_result(result, name)

        return python_async

    def python(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        try:
            result = fn(sample, output, ctx) if with_ctx else fn(sample, output)
        except Exception as err:  # the user's code: an error score, not a crash
            return crashed(err)
        return coerce_result(result, name)

    return python
