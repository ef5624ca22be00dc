"""A deterministic check that burns CPU for as long as it is told: the stand-in for any
request whose cost is not bounded. The scoring workers import it (`imports` setting).

`test.spin` spins for `sample.metadata["spin_s"]` seconds (default 0; -1 forever) and
passes; its parameter `compile_spin_s` spins at plan compilation. `test.nap` sleeps for
`sample.metadata["nap_s"]` seconds (default 0) and passes: time that is not CPU, as a
check blocking on I/O spends it (or a worker descheduled on a busy machine).
`test.spin_on` spins forever on the output `spin` and passes any other: one case of a
run whose samples the caller does not write (a checkllm combination's) can be stopped.
"""

import time
from typing import Any

from pydantic import Field
from scorewire.core.model import Output, Sample, Score
from scorewire.core.registry import REGISTRY, CheckType, Params


class SpinParams(Params):
    """Parameters of `test.spin`."""

    compile_spin_s: float = Field(0.0, ge=0)
    """Seconds to spin when the plan is compiled."""


def _register(name: str, description: str, params: type[Params], build: Any) -> None:
    """Register a test check type once (the module may be imported again)."""
    if REGISTRY.get(name) is None:
        check = CheckType(
            name=name, description=description, family="test", params=params, build=build
        )
        REGISTRY.add(check)


def _spin(seconds: float) -> None:
    end = float("inf") if seconds < 0 else time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        n += 1


def build_spin(p: SpinParams):  # type: ignore[no-untyped-def]
    _spin(p.compile_spin_s)

    def spin(sample: Sample, output: Output, ctx: object) -> Score:
        _spin(float(sample.metadata.get("spin_s", 0)))
        return Score(1.0, True, "spun")

    return spin


_register(
    "test.spin", "Spins for sample.metadata['spin_s'] seconds, then passes.", SpinParams, build_spin
)


def build_nap(p: Params):  # type: ignore[no-untyped-def]
    def nap(sample: Sample, output: Output, ctx: object) -> Score:
        time.sleep(float(sample.metadata.get("nap_s", 0)))
        return Score(1.0, True, "napped")

    return nap


_register(
    "test.nap", "Sleeps for sample.metadata['nap_s'] seconds, then passes.", Params, build_nap
)


def build_spin_on(p: Params):  # type: ignore[no-untyped-def]
    def spin_on(sample: Sample, output: Output, ctx: object) -> Score:
        if output.text == "spin":
            _spin(-1)
        return Score(1.0, True, "did not spin")

    return spin_on


_register(
    "test.spin_on", "Spins forever on the output `spin`; passes any other.", Params, build_spin_on
)
