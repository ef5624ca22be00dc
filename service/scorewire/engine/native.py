"""The native scoring kernel (`service/native`, Rust), when it is installed.

A plan of synchronous checks scores whole batches in the kernel: each check whose
factory described a native twin (`scorewire.core.twin`: contains, exact, regex,
json_schema, length) is answered there on its common path, and every other check, and
every case a twin declines (errors, JSON that Python must parse, failures only Python
words: a JSON error the kernel's parser does not know, a reference object whose key
order it cannot know), runs the plan's own Python check through `run_check_sync`. Beyond
ASCII the kernel knows a character by asking Python once (`char_facts`: its case
folding, whether `repr` shows it, its word classes), so text in any script stays in the
kernel. So a result is exactly the Python engine's, reason included, whichever ran it;
`tests/engine/test_native.py` holds the kernel to that on random cases. Only
`latency_ms` differs, as it does from one run to the next.

`make install` builds the kernel; without it (a plain `pip install` of the sources, an
unsupported platform) `available()` is False and everything scores in Python.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from scorewire.core.context import CheckContext
from scorewire.core.model import Score
from scorewire.core.twin import Twin, twin_of
from scorewire.engine.execute import run_check_sync
from scorewire.engine.runner import Case, CaseResult, Plan
from scorewire.engine.spec import CompiledCheck
from scorewire.engine.summary import ScoreCounts
from scorewire.text.units import word_classes

try:
    import scorewire_native as _kernel
except ImportError:  # not built here: the Python engine scores everything
    _kernel = None  # type: ignore[assignment]

if TYPE_CHECKING:
    from scorewire_native import NativePlan


def available() -> bool:
    """Whether the native kernel is installed."""
    return _kernel is not None


def plain_case_ok() -> Callable[[bytes, int], bool] | None:
    """The kernel's check of a serialized RunSuite case (`plain_case_ok(data, short)`:
    True when it certainly passes the server's own check), or None without the kernel."""
    return None if _kernel is None else _kernel.plain_case_ok


def _twin(cc: CompiledCheck) -> Twin | None:
    """The check's twin description (None: Python only)."""
    if cc.when is not None or cc.extractor is not None or cc.fn_is_async:
        return None
    return twin_of(cc.fn)


def build(
    plan: Plan,
    ctx: CheckContext,
    *,
    max_reason_chars: int = 4096,
    spread_bytes: Callable[..., bytes] | None = None,
    known_codes: Sequence[str] = (),
) -> NativePlan | None:
    """A `NativePlan` for `plan`, or None when the kernel is missing or cannot help (a
    plan that needs the event loop, or one without a check that has a native twin).

    `spread_bytes` writes a Score message with a judge's spread (the wire path's rare
    case: `server.convert.score_bytes`); `known_codes` are the error codes the metrics
    tally by name (the others count as `OTHER`).
    """
    if _kernel is None or plan.any_async:
        return None
    checks = [(cc.name, cc.type, _twin(cc), cc) for cc in plan.checks]
    if all(twin is None for _, _, twin, _ in checks):
        return None
    native = _kernel.NativePlan(
        checks,
        run_check_sync,
        ctx,
        Score,
        CaseResult,
        spread_bytes if spread_bytes is not None else _no_spreads,
        list(known_codes),
        ctx.extras.get("max_needles_per_request"),
        ctx.extras.get("max_needle_chars_per_request"),
        max_reason_chars,
        char_facts,
    )
    return native if native.native_checks else None  # it may refuse every description


def char_facts(ch: str) -> tuple[str, bool, int]:
    """What the kernel asks of a character beyond ASCII (once; it keeps the answer), from
    this Python's own Unicode database: its case folding, whether `repr` shows it as it
    is, and its classes for counting words (`units.word_classes`)."""
    return ch.casefold(), ch.isprintable(), word_classes(ch)


def _no_spreads(*args: Any) -> bytes:
    raise AssertionError("a plan scored in process writes no messages")


def score_batch(
    kernel: NativePlan, cases: Iterable[Any], convert: Callable[[Any, int], Case]
) -> tuple[list[CaseResult], ScoreCounts]:
    """Score a batch: its results, and the counts for `SummaryBuilder.add_counts`.

    Plain case dicts (`{"sample": {...}, "output": "text"}`) are read by the kernel;
    `convert(item, index)` makes the Case of any other item, and of any case a Python
    check must see (it raises for a malformed case, which ends the batch).

    The cyclic garbage collector is paused meanwhile: a batch makes seven container
    objects per case (five checks), none of them part of a cycle, and the collections
    they trigger walk every object of the process, the caller's dataset included. That
    cost more than the scoring itself (measured 0.18 s against 0.07 s for 20,000 cases of
    one check). It is paused only when it ran, and runs again as before once the batch is
    scored, whatever happens.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        results, counts = kernel.score_objects(cases, convert)
    finally:
        if paused:
            gc.enable()
    return results, counts
