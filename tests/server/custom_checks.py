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
    return Score(1.0, True, f"pid {os.getpid()}")
