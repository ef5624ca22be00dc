"""Agent trajectory checks: which tools were called, in what order, how often.

A trajectory is a list of steps `{"tool": name, "args": {...}}` stored under a key
(`steps:`, default "steps") of `output.value`, or of `output.metadata` when the value has
no such key. The four step-reading checks share these rules (from the catalog):

- No steps list at all on the output is an error score (`MISSING_TRAJECTORY`), so a
  broken recorder trips `max_error_rate`; a key holding something other than a list is
  an error score too (`INVALID_OUTPUT`).
- An empty list is judged like any other: it passes tool_order, max_steps and
  no_repeated_calls, and fails tool_called unless `min_times: 0`.
- A step that is not an object with a string "tool" is an error score (`INVALID_OUTPUT`)
  naming its index. `args` may be absent (no arguments), an object, or a JSON string
  holding an object (as OpenAI-style tool calls record it), which is decoded.

`trajectory.finished` reads no steps.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema
from pydantic_core import PydanticCustomError
from scorewire.core.charges import KEY_PATH
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, Uncosted, check_type
from scorewire.core.values import compile_path, json_equal, output_json, preview

FAMILY = "trajectory"

_STEPS_DOC = 'The key under output.value (or output.metadata) holding the steps [{"tool", "args"}].'


class Step:
    """One tool call of a trajectory, with its arguments decoded."""

    __slots__ = ("args", "tool")

    def __init__(self, tool: str, args: Any) -> None:
        self.tool = tool
        self.args = args


def read_steps(output: Output, key: str) -> list[Step] | Score:
    """The output's trajectory under `key`, or the error score the catalog asks for."""
    value = output.value
    steps = value.get(key) if isinstance(value, dict) else None
    where = "output.value"
    if steps is None:
        steps = output.metadata.get(key)
        where = "output.metadata"
    if steps is None:
        return Score.fail_with_error(
            ErrorCode.MISSING_TRAJECTORY,
            f"no trajectory: neither output.value nor output.metadata has a {key!r} list",
        )
    if not isinstance(steps, list):
        return Score.fail_with_error(
            ErrorCode.INVALID_OUTPUT,
            f"the trajectory {where}[{key!r}] is {type(steps).__name__}, not a list",
        )
    out = []
    for i, step in enumerate(steps):
        tool = step.get("tool") if isinstance(step, dict) else None
        if not isinstance(tool, str):
            return Score.fail_with_error(
                ErrorCode.INVALID_OUTPUT,
                f"step {i} of the trajectory is not an object with a string 'tool': "
                f"{preview(step)}",
            )
        args = step.get("args")
        if isinstance(args, str):
            try:
                decoded = json.loads(args)
            except ValueError:
                decoded = None
            if isinstance(decoded, dict):
                args = decoded
        out.append(Step(tool, {} if args is None else args))
    return out


def _steps_param() -> Any:
    return Field("steps", min_length=1, description=_STEPS_DOC)


_STEPS_KEY = Uncosted("the key of the steps, looked up once per output")
_TOOL_NAME = Uncosted("a tool name, compared with each step's in time linear in its length")


# --- trajectory.tool_called ------------------------------------------------------------


def _args_matcher(value: Any) -> Any:
    if value is None or isinstance(value, dict) or (callable(value) and not isinstance(value, str)):
        return value
    raise PydanticCustomError(
        "args_matcher",
        "args must be an object of expected arguments (a predicate function works only in "
        "the Python API)",
    )


ArgsMatcher = Annotated[
    dict[str, Any] | Callable[[Any], Any] | None,
    BeforeValidator(_args_matcher),
    WithJsonSchema(
        {
            "type": "object",
            "description": "Expected arguments, matched as a subset of the call's arguments.",
        }
    ),
]


class ToolCalledParams(Params):
    """Parameters of `trajectory.tool_called`."""

    name: str = Field(min_length=1, description="The tool's name.")
    min_times: int = Field(1, ge=0, description="At least this many matching calls.")
    max_times: int | None = Field(None, ge=0, description="At most this many matching calls.")
    args: ArgsMatcher = Field(
        None,
        description="Only count calls whose arguments include these (a subset match); in "
        "the Python API also a predicate fn(args) -> bool.",
    )
    steps: str = _steps_param()


def _subset(expected: dict[str, Any]) -> Callable[[Any], bool]:
    items = list(expected.items())

    def matches(args: Any) -> bool:
        return isinstance(args, dict) and all(
            k in args and json_equal(v, args[k]) for k, v in items
        )

    return matches


@check_type(
    "trajectory.tool_called",
    description="The tool was called between min_times and max_times times.",
    family=FAMILY,
    params=ToolCalledParams,
    costs={
        "name": _TOOL_NAME,
        "args": Uncosted("compared with the arguments of each call to the tool, key by key"),
        "steps": _STEPS_KEY,
    },
)
def build_tool_called(p: ToolCalledParams) -> CheckFn:
    """`trajectory.tool_called`: the count of calls to `name` is within bounds.

    With `args`, only calls whose arguments match count: an object matches when every
    key it lists is present in the call's arguments with a JSON-equal value (a top-level
    subset; nested values compare whole); a Python predicate `fn(args) -> bool` matches
    when it returns true (if it raises, the score is an error, `CHECK_FAILED`).
    `max_times` below `min_times` is a load error.
    """
    name, lo, hi, key = p.name, p.min_times, p.max_times, p.steps
    if hi is not None and hi < lo:
        raise ParamError("max_times", f"max_times {hi} is below min_times {lo}")
    matcher: Callable[[Any], Any] | None = _subset(p.args) if isinstance(p.args, dict) else p.args
    bounds = f"at least {lo}" if hi is None else f"between {lo} and {hi}"
    if hi is not None and hi == lo:
        bounds = f"exactly {lo}"
    what = f"{name} (with matching args)" if matcher is not None else name

    def tool_called(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        steps = read_steps(output, key)
        if isinstance(steps, Score):
            return steps
        count = 0
        for step in steps:
            if step.tool != name:
                continue
            if matcher is not None:
                try:
                    if not matcher(step.args):
                        continue
                except Exception as err:  # the user's predicate: an error score
                    return Score.fail_with_error(
                        ErrorCode.CHECK_FAILED,
                        f"the args predicate raised {type(err).__name__}: {err}",
                    )
            count += 1
        passed = count >= lo and (hi is None or count <= hi)
        times = "time" if count == 1 else "times"
        return Score(
            float(passed), passed, f"{what} was called {count} {times} (expected {bounds})"
        )

    return tool_called


# --- trajectory.tool_order -------------------------------------------------------------


class ToolOrderParams(Params):
    """Parameters of `trajectory.tool_order`."""

    before: str = Field(min_length=1, description="The tool that must come first.")
    after: str = Field(min_length=1, description="The tool that must follow it.")
    steps: str = _steps_param()


@check_type(
    "trajectory.tool_order",
    description="Every call to `after` is preceded by a call to `before`.",
    family=FAMILY,
    params=ToolOrderParams,
    costs={"before": _TOOL_NAME, "after": _TOOL_NAME, "steps": _STEPS_KEY},
)
def build_tool_order(p: ToolOrderParams) -> CheckFn:
    """`trajectory.tool_order`: every `after` call has a `before` call somewhere earlier.

    A trajectory with no `after` call passes (nothing is out of order); so does an empty
    one. `before` equal to `after` is a load error (the first call could never pass).
    """
    before, after, key = p.before, p.after, p.steps
    if before == after:
        raise ParamError("after", "before and after name the same tool")

    def tool_order(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        steps = read_steps(output, key)
        if isinstance(steps, Score):
            return steps
        seen_before = False
        for i, step in enumerate(steps):
            if step.tool == before:
                seen_before = True
            elif step.tool == after and not seen_before:
                return Score(0.0, False, f"step {i} calls {after} before any call to {before}")
        return Score(1.0, True, f"every {after} call follows a {before} call")

    return tool_order


# --- trajectory.max_steps --------------------------------------------------------------


class MaxStepsParams(Params):
    """Parameters of `trajectory.max_steps`."""

    n: int = Field(ge=0, description="The most steps allowed.")
    steps: str = _steps_param()


@check_type(
    "trajectory.max_steps",
    description="The trajectory has at most n steps.",
    family=FAMILY,
    params=MaxStepsParams,
    costs={"steps": _STEPS_KEY},
)
def build_max_steps(p: MaxStepsParams) -> CheckFn:
    """`trajectory.max_steps`: at most `n` steps (every step counts, whatever the tool)."""
    n, key = p.n, p.steps

    def max_steps(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        steps = read_steps(output, key)
        if isinstance(steps, Score):
            return steps
        count = len(steps)
        if count <= n:
            return Score(1.0, True, f"{count} steps, within the limit of {n}")
        return Score(0.0, False, f"{count} steps, over the limit of {n}")

    return max_steps


# --- trajectory.no_repeated_calls ------------------------------------------------------


class NoRepeatedCallsParams(Params):
    """Parameters of `trajectory.no_repeated_calls`."""

    max_repeats: int = Field(
        0,
        ge=0,
        description="How many times one identical (tool, args) call may be repeated after "
        "its first occurrence (default 0: never).",
    )
    steps: str = _steps_param()


def _canonical(value: Any) -> Any:
    """A hashable form of a JSON value under JSON equality (1 == 1.0, true != 1)."""
    if isinstance(value, dict):
        return ("o", tuple(sorted((str(k), _canonical(v)) for k, v in value.items())))
    if isinstance(value, list | tuple):
        return ("a", tuple(_canonical(v) for v in value))
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, int | float):
        return ("n", value)
    if value is None:
        return ("z",)
    return ("s", str(value))


@check_type(
    "trajectory.no_repeated_calls",
    description="No identical (tool, args) call repeats (loop detection).",
    family=FAMILY,
    params=NoRepeatedCallsParams,
    costs={"steps": _STEPS_KEY},
)
def build_no_repeated_calls(p: NoRepeatedCallsParams) -> CheckFn:
    """`trajectory.no_repeated_calls`: no identical call occurs more than `max_repeats + 1` times.

    Two calls are identical when the tool names are equal and the arguments are JSON-equal
    (key order ignored). Repeats count anywhere in the trajectory, not only back to back:
    an agent alternating between two identical calls is looping too. `max_repeats` is the
    number of repeats allowed after the first call (default 0, the catalog's "no identical
    call repeats").
    """
    limit, key = p.max_repeats + 1, p.steps

    def no_repeated_calls(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        steps = read_steps(output, key)
        if isinstance(steps, Score):
            return steps
        counts = Counter((s.tool, _canonical(s.args)) for s in steps)
        worst = max(counts.values(), default=0)
        if worst <= limit:
            return Score(1.0, True, "no call repeats beyond the limit")
        tool = next(t for (t, _), c in counts.items() if c == worst)
        return Score(
            0.0,
            False,
            f"an identical {tool} call occurs {worst} times (at most {limit} allowed)",
        )

    return no_repeated_calls


# --- trajectory.finished ---------------------------------------------------------------


class FinishedParams(Params):
    """Parameters of `trajectory.finished`."""

    path: str = Field(
        "answer",
        description="Where the final answer sits in output.value (dotted keys or a JSON pointer).",
    )


def _is_empty(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, list | dict):
        return not value
    return False


@check_type(
    "trajectory.finished",
    description="The output has a non-empty final answer (output.value[path]).",
    family=FAMILY,
    params=FinishedParams,
    costs={"path": KEY_PATH},
)
def build_finished(p: FinishedParams) -> CheckFn:
    """`trajectory.finished`: the value at `path` (default "answer") is non-empty.

    Reads `output.value`, or `output.text` parsed as JSON when the output has no value.
    Empty means null, a string of only white space, an empty list or an empty object;
    numbers and booleans (0 and false included) are answers. A missing answer, or an
    output that is not JSON, is a plain fail: it reads no steps, so no trajectory is
    needed.
    """
    path = compile_path(p.path, "path")

    def finished(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        ok, doc, _ = output_json(output)
        if not ok:
            return Score(0.0, False, "no final answer: the output is not JSON")
        found, value, why = path.lookup(doc)
        if not found:
            return Score(0.0, False, f"no final answer at {path.text!r} ({why})")
        if _is_empty(value):
            return Score(0.0, False, f"the final answer at {path.text!r} is empty")
        return Score(1.0, True, f"finished with an answer at {path.text!r}")

    return finished
