"""Compiled plans: what the server learns of one (`PlanInfo`), and the plan cache.

The serving process keeps a cache for the plans it scores itself; each scoring worker
keeps its own for the plans it compiles. The budget (`plan_cache_bytes`) holds for each
process.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from scorewire.engine.summary import Gate
from scorewire.suites.evalstone import RunSettings

T = TypeVar("T")

PLAN_CACHE_SIZE = 512
PLAN_BYTES_PER_SOURCE_BYTE = 8
"""A compiled plan's memory per byte of the specs it came from, generously: parameters are
kept as Python objects (a str of n bytes is ~n + 49 bytes, a list slot 8 more per item)."""
PLAN_BYTES_PER_REGEX_INSTRUCTION = 32
"""Memory of a compiled RE2 program per instruction, generously (measured ~18): a short
pattern can compile to a big program (`\\d{1000}` is 84,000 instructions, ~1.5 MB)."""


class PlanCache(Generic[T]):
    """An LRU of compiled suites keyed by a digest of the request's check specs.

    Bounded by count and by bytes: each plan's size is estimated from the size of the
    specs it was compiled from (`PLAN_BYTES_PER_SOURCE_BYTE` per byte) plus the RE2
    programs its patterns compiled to, so big parameters cannot pin memory; a plan bigger
    than the whole budget is used once and not kept.
    """

    def __init__(self, size: int = PLAN_CACHE_SIZE, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._size = size
        self._max_bytes = max_bytes
        self._items: OrderedDict[bytes, tuple[T, int]] = OrderedDict()
        self.bytes = 0
        """Estimated bytes of the plans held now."""

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: bytes) -> T | None:
        """The cached item for `key` (now the most recently used), or None."""
        hit = self._items.get(key)
        if hit is None:
            return None
        self._items.move_to_end(key)
        return hit[0]

    def get_or_build(
        self,
        key: bytes,
        build: Callable[[], T],
        source_bytes: int = 0,
        compiled_bytes: Callable[[], int] = lambda: 0,
    ) -> T:
        """The cached suite for `key`, or `build()` stored under it.

        Its size is estimated from `source_bytes` plus `compiled_bytes()`, asked after
        the build (what compiling made that the source does not show).
        """
        hit = self._items.get(key)
        if hit is not None:
            self._items.move_to_end(key)
            return hit[0]
        suite = build()
        cost = (source_bytes + 256) * PLAN_BYTES_PER_SOURCE_BYTE + compiled_bytes()
        if cost > self._max_bytes:
            return suite
        self._items[key] = (suite, cost)
        self.bytes += cost
        while len(self._items) > self._size or self.bytes > self._max_bytes:
            _, (_, dropped) = self._items.popitem(last=False)
            self.bytes -= dropped
        return suite


@dataclass(slots=True, frozen=True)
class CheckName:
    """A check's name and type: all the server needs to label its scores."""

    name: str
    type: str


@dataclass(slots=True)
class PlanInfo:
    """What the server learns about a compiled plan (it never holds a worker's plan)."""

    checks: list[CheckName]
    any_async: bool
    gate: Gate
    settings: RunSettings
    suite_cases: int
    """Cases the suite document carries (its inline dataset), 0 when none."""
    whole_text_caps: tuple[int | None, ...] = ()
    """The caps of the checks that read a case's whole output (see `engine.metering`)."""
    suite_case_problem: tuple[str, str] | None = None
    """(field, message) of the first inline case over an output limit, if any."""
    suites: list[str] = field(default_factory=list)
    """Suite names of the YAML document (ValidateSuite only)."""
    compile_s: float = 0.0
    """CPU seconds the worker's thread spent compiling the plan: CPU, not wall time, so
    that a busy machine (the process descheduled mid-compile) does not inflate it."""
    ms_per_kb: float | None = None
    """The executor's estimate of what scoring one case of this plan costs (ms per KiB
    of request): see `Executor.learn`."""
    cpu_ms_per_kb: float = 0.0
    """The worst CPU time a worker spent scoring one case of this plan (ms per KiB)."""
    wall_ms_per_kb: float = math.inf
    """The best wall time the checks of one case of this plan took (ms per KiB)."""
    judge_models: tuple[tuple[str, str], ...] = ()
    """(field path, judge model as written, `""` for the default) of every judge call the
    plan's checks may make: what the preflight checks before any call."""
    format: str = "evalstone"
    """`checkllm` for a checkllm document (a plan per test: `any_async` when any test's
    checks wait on I/O), which the workers score only as chunks of recorded outputs."""

    @property
    def names(self) -> list[str]:
        """Check names in result order."""
        return [c.name for c in self.checks]

    @property
    def types(self) -> list[str]:
        """Check types in result order."""
        return [c.type for c in self.checks]
