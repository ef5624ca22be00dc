"""Server-side custom checks the service tests register (as SCOREWIRE_IMPORTS would)."""

import asyncio
import os

from scorewire.core.model import Output, Sample, Score
from scorewire.engine.custom import check

STARTED = {"slow": 0, "finished": 0}


@check("test.slow")
async def slow(sample: Sample, output: Output) -> bool:
    """Sleeps for sample.metadata['sleep'] seconds (default 0.2), then passes."""
    STARTED["slow"] += 1
    await asyncio.sleep(float(sample.metadata.get("sleep", 0.2)))
    STARTED["finished"] += 1
    return True


@check("test.echo_len")
def echo_len(sample: Sample, output: Output) -> float:
    """Returns len(text)/10 capped at 1: a numeric custom result."""
    return min(len(output.text) / 10, 1.0)


@check("test.pid")
def pid(sample: Sample, output: Output) -> Score:
    """Passes, naming the serving process in its reason (to see which worker answered)."""
    return Score.of(True, f"pid {os.getpid()}")


SCORED = {"count": 0}


@check("test.count")
def count(sample: Sample, output: Output) -> bool:
    """Counts the cases it scores (to see how far a stream has been read), then passes."""
    SCORED["count"] += 1
    return True


@check("test.long_reason")
def long_reason(sample: Sample, output: Output) -> Score:
    """Passes with a reason as long as the output's text says (`int(output.text)` chars)."""
    return Score.of(True, "r" * int(output.text or "0"))
