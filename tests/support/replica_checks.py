"""Custom checks the replica tests' servers import: which replica scored a case.

The servers of tests.support.replicas run with `REPLICA_NAME` set to `r0`, `r1`, ...;
the check reports it in its reason (the server's scoring workers inherit it too).
"""

import asyncio
import os
from pathlib import Path

from scorewire.core.model import Output, Sample, Score
from scorewire.engine.custom import check


def replica_of(reason: str) -> str:
    """The replica name in a `replica.where` reason (`"scored by r1"` -> `"r1"`)."""
    return reason.rsplit(" ", 1)[-1]


def _append_line(path: Path, line: str) -> None:
    # a few bytes, once per case: blocking the loop for it does no harm
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")


@check("replica.where")
async def where(sample: Sample, output: Output) -> Score:
    """Sleeps sample.metadata['sleep'] seconds (default 0), then passes, naming the replica.

    `sleep_<replica>` (`sleep_r1`) overrides `sleep` on that replica: a replica that holds
    its cases while the others answer. With sample.metadata['mark'] a file path, it
    first appends `<replica> <sample id>` to it, so a test sees which replica has begun
    which case."""
    name = os.environ.get("REPLICA_NAME", "?")
    mark = sample.metadata.get("mark")
    if mark:
        _append_line(Path(mark), f"{name} {sample.id}")
    meta = sample.metadata
    await asyncio.sleep(float(meta.get(f"sleep_{name}", meta.get("sleep", 0))))
    return Score(1.0, True, f"scored by {name}")
