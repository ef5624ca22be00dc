"""What the request meter measures, it measures without paying for it first.

A parameter built from YAML aliases shares its parts, so it is small in memory and huge
once written out; metering it must not write it out. Python's allocator is traced
(`tracemalloc`) while a spec is measured: the peak says whether it was.
"""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
from scorewire.core.cost import LimitExceeded, metering
from scorewire.engine.metering import measure_specs, request_meter
from scorewire.engine.spec import CheckSpec
from scorewire.settings import Settings
from scorewire.suites.compact_lines import compact_specs

PART = "x" * 4000
BIG = [[PART] * 1000] * 10
"""40 MB once written out, a few kB in memory: what aliases make."""


def peak_bytes(fn: Callable[[], Any]) -> int:
    """The most Python memory allocated while `fn` ran (its exception is expected)."""
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceeded):
            fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_schema_is_measured_without_being_written_out() -> None:
    # Was: json.dumps of the whole schema (40 MB here, 4 GB in the suite).
    meter = request_meter(Settings())
    spec = CheckSpec("json_schema", {"schema": {"enum": BIG}})
    peak = peak_bytes(lambda: measure_specs(meter, [(spec, "checks.c")]))
    assert peak < 1_000_000, peak
    assert meter.used["max_schema_bytes_per_request"] > Settings().max_schema_bytes_per_request


def test_a_schema_within_the_limit_is_charged_its_compact_json_size() -> None:
    meter = request_meter(Settings())
    spec = CheckSpec("json_schema", {"schema": {"type": "string", "enum": ["é", 1]}})
    measure_specs(meter, [(spec, "checks.c")])
    assert meter.used["max_schema_bytes_per_request"] == len('{"type":"string","enum":["é",1]}')


def test_a_compact_json_check_is_named_only_after_its_length_is_measured() -> None:
    # The JSON form's name is the item written out: measured against the name limit
    # first, at its path (was: written out whole, then refused).
    item = {"type": "contains", "value": BIG}
    with metering(request_meter(Settings())):
        peak = peak_bytes(lambda: compact_specs([item], "suites.s.compact"))
    assert peak < 1_000_000, peak
    with metering(request_meter(Settings())), pytest.raises(LimitExceeded) as info:
        compact_specs([item], "suites.s.compact")
    assert info.value.setting == "max_check_name_chars"
    assert info.value.field == "suites.s.compact[0].name"
