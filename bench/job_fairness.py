"""Job runners shared between tenants: how long another tenant's small job waits while
one tenant has eight long jobs queued.

Run: `.venv/bin/python bench/job_fairness.py --runs 5 [--old-tree DIR]` (loopback only,
bounded: tenant A's jobs are cancelled once B's job ended). Each run starts `scorewire
serve` with its defaults and two tokens for each variant:

- **turns** (the defaults: a runner gives its job back every `jobs_slice_s`, 2 s, when
  another tenant running fewer jobs has one waiting);
- **no turns** (`SCOREWIRE_JOBS_SLICE_S=1e9`: a claimed job runs to its end; claims still
  take the tenant running fewest);
- **old** (with `--old-tree DIR`, a checkout of an earlier commit, e.g.
  `git archive 8dbca74 service | tar -x -C DIR`: claims in creation order, as before).

In each: tenant B's job of 1,000 cheap cases alone (the baseline), then tenant A creates
eight jobs of `--a-cases` heavy cases (a JSON output against a 20 kB schema), and once
A's first job is running B creates the same job again while B sends worker-routed Scores
at 20/s. Reported: B's job time alone and under A's jobs, B's Scores p50/p99 during A's
jobs, A's progress when B's job ended. One line per run and variant, then each variant's
spread over the runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import grpc  # noqa: E402
from contention import OPTIONS, _as, heavy_suite, start_server, worker_request  # noqa: E402
from hostile_neighbour import stop_server  # noqa: E402
from scorewire.v1 import jobs_pb2 as jpb  # noqa: E402
from scorewire.v1 import jobs_pb2_grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

B_CASES = 1000


def _requests(config: jpb.JobConfig, cases: list[pb.Case]) -> Iterator[jpb.CreateJobRequest]:
    config.case_count = len(cases)
    yield jpb.CreateJobRequest(config=config)
    for i in range(0, len(cases), 500):
        yield jpb.CreateJobRequest(cases=jpb.JobCases(cases=cases[i : i + 500]))


def b_job() -> tuple[jpb.JobConfig, list[pb.Case]]:
    """B's job: 1,000 cheap cases."""
    config = jpb.JobConfig(compact=["contains:refund", "length:1..200", r"regex:within \d+ days"])
    cases = []
    for i in range(B_CASES):
        c = pb.Case(output=pb.Output(text="The refund was issued within 5 days."))
        c.sample.id = str(i)
        cases.append(c)
    return config, cases


def a_job(n: int) -> tuple[jpb.JobConfig, list[pb.Case]]:
    """One of A's jobs: `n` heavy cases."""
    suite = heavy_suite(n)
    return jpb.JobConfig(checks=suite.checks), list(suite.cases)


async def _until_end(stub: jobs_pb2_grpc.JobServiceStub, job_id: str, who: str) -> jpb.Job:
    last = None
    async for m in stub.WatchJob(jpb.WatchJobRequest(job_id=job_id), metadata=_as(who)):
        last = m.job
    assert last is not None
    return last


async def _timed_b(stub: jobs_pb2_grpc.JobServiceStub) -> float:
    config, cases = b_job()
    t0 = time.monotonic()
    job = (await stub.CreateJob(_requests(config, cases), metadata=_as("b"))).job
    end = await _until_end(stub, job.job_id, "b")
    assert end.state == jpb.JOB_STATE_SUCCEEDED, end
    return time.monotonic() - t0


async def _scores(stub: pb_grpc.ScoringServiceStub, stop: asyncio.Event) -> list[float]:
    """B's worker-routed Scores at 20/s until `stop`; their latencies."""
    req, lat = worker_request(), []
    while not stop.is_set():
        t0 = time.perf_counter()
        await stub.Score(req, metadata=_as("b"), timeout=30)
        lat.append(time.perf_counter() - t0)
        await asyncio.sleep(max(0.0, 0.05 - (time.perf_counter() - t0)))
    return lat


async def one(variant: str, env: dict[str, str], a_cases: int) -> dict[str, Any]:
    proc, address = start_server(env)
    try:
        async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
            jobs = jobs_pb2_grpc.JobServiceStub(ch)
            scoring = pb_grpc.ScoringServiceStub(ch)
            await scoring.Score(worker_request(), metadata=_as("b"), timeout=30)  # warm
            alone = await _timed_b(jobs)
            config, cases = a_job(a_cases)
            ids = [
                (await jobs.CreateJob(_requests(config, cases), metadata=_as("a"))).job.job_id
                for _ in range(8)
            ]
            while True:
                got = await jobs.GetJob(jpb.GetJobRequest(job_id=ids[0]), metadata=_as("a"))
                if got.job.cases_done > 0:
                    break
                await asyncio.sleep(0.05)
            stop = asyncio.Event()
            scores = asyncio.create_task(_scores(scoring, stop))
            under = await _timed_b(jobs)
            stop.set()
            lat = sorted(await scores)
            done = 0
            for job_id in ids:
                got = await jobs.GetJob(jpb.GetJobRequest(job_id=job_id), metadata=_as("a"))
                done += got.job.cases_done
                if got.job.state in (jpb.JOB_STATE_QUEUED, jpb.JOB_STATE_RUNNING):
                    await jobs.CancelJob(jpb.CancelJobRequest(job_id=job_id), metadata=_as("a"))
    finally:
        stop_server(proc)
    p99 = lat[min(len(lat) - 1, int(0.99 * len(lat)))] if lat else float("nan")
    return {
        "variant": variant, "alone_s": alone, "under_s": under, "a_done": done,
        "score_p50_ms": statistics.median(lat) * 1000 if lat else float("nan"),
        "score_p99_ms": p99 * 1000,
    }  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of every variant (3)")
    parser.add_argument("--a-cases", type=int, default=3000, help="cases in each of A's jobs")
    parser.add_argument("--old-tree", default="", help="a tree with an earlier service/")
    args = parser.parse_args()
    variants: list[tuple[str, dict[str, str]]] = [
        ("turns", {}),
        ("no turns", {"SCOREWIRE_JOBS_SLICE_S": "1e9"}),
    ]
    if args.old_tree:
        old = str(Path(args.old_tree).resolve() / "service")
        pythonpath = os.pathsep.join([old, os.environ.get("PYTHONPATH", "")])
        variants.append(("old", {"PYTHONPATH": pythonpath}))
    print(f"load {os.getloadavg()[0]:.2f}; A: 8 jobs x {args.a_cases} heavy cases; "
          f"B: one job of {B_CASES} cheap cases, Scores at 20/s")  # fmt: skip
    results: list[dict[str, Any]] = []
    for r in range(args.runs):
        for name, env in variants:
            res = asyncio.run(one(name, env, args.a_cases))
            results.append(res)
            print(f"run {r + 1} {name:9s} B job alone {res['alone_s']:.2f} s, under A's jobs "
                  f"{res['under_s']:.2f} s; A's cases done then {res['a_done']}; B Scores "
                  f"p50/p99 {res['score_p50_ms']:.1f}/{res['score_p99_ms']:.1f} ms",
                  flush=True)  # fmt: skip
    print(f"load {os.getloadavg()[0]:.2f}")
    for name, _ in variants:
        mine = [r for r in results if r["variant"] == name]
        under = [r["under_s"] for r in mine]
        p99 = [r["score_p99_ms"] for r in mine]
        print(f"{name:9s} B job under A's jobs: min/median/max {min(under):.2f}/"
              f"{statistics.median(under):.2f}/{max(under):.2f} s; B Score p99 "
              f"{min(p99):.1f}-{max(p99):.1f} ms")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
