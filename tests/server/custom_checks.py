"""Server-side custom checks the service tests register (as SCOREWIRE_IMPORTS would)."""

import asyncio
import os
from pathlib import Path

from scorewire.core.model import Output, Sample, Score
from scorewire.engine.custom import check

STARTED = {"slow": 0, "finished": 0, "cancelled": 0}
"""test.slow checks started, finished and cancelled in this process (an in-process server)."""


def in_flight() -> int:
    """test.slow checks running now in this process."""
    return STARTED["slow"] - STARTED["finished"] - STARTED["cancelled"]


def marks(path: Path) -> list[str]:
    """The sample ids a server process wrote to `path` as it started test.slow checks."""
    return path.read_text().split() if path.exists() else []


def _append_line(path: Path, line: str) -> None:
    # a few bytes, once per check: blocking the loop for it does no harm
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


@check("test.slow")
async def slow(sample: Sample, output: Output) -> bool:
    """Sleeps for sample.metadata['sleep'] seconds (default 0.2), then passes.

    Counts itself in STARTED; with sample.metadata['mark'] a file path, it also appends
    the sample id to that file as it starts, so a test sees a server process begin it."""
    STARTED["slow"] += 1
    mark = sample.metadata.get("mark")
    if mark:
        _append_line(Path(mark), sample.id or "-")
    try:
        await asyncio.sleep(float(sample.metadata.get("sleep", 0.2)))
    except asyncio.CancelledError:
        STARTED["cancelled"] += 1
        raise
    STARTED["finished"] += 1
    return True


@check("test.echo_len")
def echo_len(sample: Sample, output: Output) -> float:
    """Returns len(text)/10 capped at 1: a numeric custom result."""
    return min(len(output.text) / 10, 1.0)


@check("test.pid")
def pid(sample: Sample, output: Output) -> Score:
    """Passes, naming the serving process in its reason (to see which worker answered)."""
    return Score(1.0, True, f"pid {os.getpid()}")


SCORED = {"count": 0}


@check("test.count")
def count(sample: Sample, output: Output) -> bool:
    """Counts the cases it scores (to see how far a stream has been read), then passes."""
    SCORED["count"] += 1
    return True


@check("test.long_reason")
def long_reason(sample: Sample, output: Output) -> Score:
    """Passes with a reason as long as the output's text says (`int(output.text)` chars)."""
    return Score(1.0, True, "r" * int(output.text or "0"))
