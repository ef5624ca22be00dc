"""A PostgreSQL store that hangs: how long calls take to fail, and the largest write's time.

Run: `PYTHONPATH=service .venv/bin/python bench/store_outage.py` (`--help` for the flags).
Loopback only, bounded: a throwaway PostgreSQL cluster (`tests.support.postgres`, needs
initdb and pg_ctl) for the run and label stores, opened as the server opens them.

1. The largest write the run recorder makes (`--chunks` chunks of `--chunk-mib` MiB in one
   transaction: 16 of 1 MiB by default, its MAX_BYTES_PER_COMMIT), timed `--rounds` times
   with no deadline in the way: what the store deadline must leave room for on a healthy
   database.
2. The database frozen (SIGSTOP on every process of the cluster): a run-store write, a
   run read and a label put each timed to their failure with the deadline
   `--timeout` (the default of SCOREWIRE_STORE_TIMEOUT_S), then the same calls again at
   once after SIGCONT, which must succeed.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "service")]

from scorewire.labels.label_model import Label, output_hash  # noqa: E402
from scorewire.labels.postgres import PostgresLabelStore  # noqa: E402
from scorewire.runs.postgres import PostgresRunStore  # noqa: E402
from scorewire.runs.run_model import Chunk, RunInfo, new_run_id, utc_now  # noqa: E402

from tests.support.postgres import PostgresCluster, _pg_bindir  # noqa: E402


def _run() -> RunInfo:
    return RunInfo(
        run_id=new_run_id(),
        name="bench",
        source="RunSuite",
        tenant="",
        labels={},
        started_at=utc_now(),
        suite="",
        suite_sha256="0" * 64,
        checks=["c"],
    )


async def _timed(call: Awaitable[object]) -> tuple[float, str]:
    started = time.perf_counter()
    try:
        await call
        outcome = "ok"
    except Exception as err:
        outcome = f"{type(err).__name__}: {err}"
    return time.perf_counter() - started, outcome


async def largest_write(url: str, chunks: int, mib: float, rounds: int) -> None:
    store = await PostgresRunStore.open(url, timeout_s=600.0)
    try:
        run = _run()
        await store.write([run], [], [])
        blob = os.urandom(int(mib * 1024 * 1024 / 2))
        times = []
        for _ in range(rounds):
            batch = [Chunk(run.run_id, blob, blob, 256) for _ in range(chunks)]
            seconds, outcome = await _timed(store.write([], batch, []))
            assert outcome == "ok", outcome
            times.append(seconds)
        print(
            f"one write of {chunks} x {mib:g} MiB: "
            + ", ".join(f"{t:.2f}" for t in times)
            + f" s (median {statistics.median(times):.2f} s)"
        )
    finally:
        await store.close()


async def frozen(cluster: PostgresCluster, url: str, timeout_s: float) -> None:
    runs = await PostgresRunStore.open(url, timeout_s=timeout_s)
    labels = await PostgresLabelStore.open(url, timeout_s=timeout_s)
    try:
        run = _run()
        await runs.write([run], [], [])
        label = Label(
            sample_id="s",
            output_hash=output_hash("x"),
            passed=True,
            labeller="bench",
            created_at=datetime.now(UTC),
        )
        await labels.put([label])

        def calls() -> dict[str, Awaitable[object]]:
            return {
                "run-store write": runs.write([], [Chunk(run.run_id, b"c", b"r", 1)], []),
                "run read": runs.get_run(run.run_id),
                "label put": labels.put([label]),
            }

        with cluster.frozen():
            during = {name: await _timed(call) for name, call in calls().items()}
        after = {name: await _timed(call) for name, call in calls().items()}
        for name in during:
            (t1, o1), (t2, o2) = during[name], after[name]
            print(f"frozen, {name}: {t1:.2f} s ({o1}); right after SIGCONT: {t2:.3f} s ({o2})")
    finally:
        await runs.close()
        await labels.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=16, help="chunks in the largest write")
    parser.add_argument("--chunk-mib", type=float, default=1.0, help="size of one chunk")
    parser.add_argument("--rounds", type=int, default=3, help="timings of the largest write")
    parser.add_argument("--timeout", type=float, default=2.0, help="the store deadline, s")
    args = parser.parse_args()
    bindir = _pg_bindir()
    if bindir is None:
        sys.exit("PostgreSQL's initdb and pg_ctl are not installed")
    cluster = PostgresCluster(bindir)
    try:
        cluster.init()
        cluster.start()
        url = cluster.create_database("bench")
        await largest_write(url, args.chunks, args.chunk_mib, args.rounds)
        await frozen(cluster, url, args.timeout)
    finally:
        cluster.destroy()


if __name__ == "__main__":
    asyncio.run(main())
