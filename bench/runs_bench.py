"""Recording benchmark: RunSuite with recording on versus off, on one server, in one run.

Run: `PYTHONPATH=service:clients/python/src .venv/bin/python bench/runs_bench.py`.

The server runs as its own process (`scorewire serve`, its state directory and SQLite
run store in a temporary directory); this process is the client. Each round sends the
same RunSuite (20,000 recorded outputs x 5 deterministic checks) twice, once with
`record: false` and once with `record: true`, in alternating order, so that background
load hits both alike. It prints the median time of each and the spread (min..max) over
the rounds, and the overhead of recording: median(on) / median(off) - 1 (target <= 10%),
with the per-round ratios' range. On a loaded machine wall time swings by tens of
percent between rounds, so it also prints the CPU seconds the server process itself
spent per run (from /proc: recording happens there, the scoring workers are other
processes), which load disturbs far less. Every recorded run is checked to hold every
result. Loopback only; bounded in rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import grpc  # noqa: E402
from engine_bench import CHECKS, make_cases  # noqa: E402
from scorewire.v1 import runs_pb2 as rpb  # noqa: E402
from scorewire.v1 import runs_pb2_grpc as rpb_grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]


def suite_request(samples: int) -> pb.RunSuiteRequest:
    """The service benchmark's RunSuite: `samples` recorded outputs x 5 checks."""
    req = pb.RunSuiteRequest(run_name="bench")
    for spec in CHECKS:
        m = req.checks.add(type=spec.type)
        m.params.update(dict(spec.params))
    for c in make_cases(samples):
        case = req.cases.add()
        case.sample.id = c.sample.id
        case.sample.input.struct_value.update(c.sample.input)
        case.sample.expected.string_value = str(c.sample.expected)
        case.output.text = c.output.text
    return req


def cpu_s(pid: int) -> float:
    """CPU seconds (user + system) process `pid` has used, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def one_run(stub: pb_grpc.ScoringServiceStub, req: pb.RunSuiteRequest) -> tuple[float, str]:
    """Seconds for one RunSuite, read to the end, and the run id (empty when not recorded)."""
    results = 0
    run_id = ""
    t0 = time.perf_counter()
    async for ev in stub.RunSuite(req):
        if ev.WhichOneof("event") == "results":
            results += len(ev.results.results)
        else:
            run_id = ev.summary.run_id
    elapsed = time.perf_counter() - t0
    assert results == len(req.cases), (results, len(req.cases))
    return elapsed, run_id


async def bench(addr: str, pid: int, samples: int, rounds: int) -> None:
    off = suite_request(samples)
    on = pb.RunSuiteRequest()
    on.CopyFrom(off)
    off.record = False
    on.record = True
    async with grpc.aio.insecure_channel(addr, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        runs = rpb_grpc.RunServiceStub(ch)
        await one_run(stub, off)  # warm up: plan cache, workers, connections
        await one_run(stub, on)
        times: dict[bool, list[float]] = {False: [], True: []}
        cpu: dict[bool, list[float]] = {False: [], True: []}
        ratios = []
        for i in range(rounds):
            order = (False, True) if i % 2 == 0 else (True, False)
            got = {}
            for record in order:
                c0 = cpu_s(pid)
                got[record], run_id = await one_run(stub, on if record else off)
                cpu[record].append(cpu_s(pid) - c0)
                if record:
                    run = (await runs.GetRun(rpb.GetRunRequest(run_id=run_id))).run
                    assert run.results == samples and run.status == rpb.RUN_STATUS_COMPLETE
            times[False].append(got[False])
            times[True].append(got[True])
            ratios.append(got[True] / got[False])
    med_off, med_on = statistics.median(times[False]), statistics.median(times[True])
    checks = samples * len(CHECKS)
    print(
        f"RunSuite, {samples:,} cases x {len(CHECKS)} checks, {rounds} alternating rounds "
        "(separate client process, SQLite run store):"
    )
    for label, ts in (("recording off", times[False]), ("recording on ", times[True])):
        med = statistics.median(ts)
        print(
            f"  {label}: median {med * 1000:7.1f} ms ({checks / med:9,.0f} checks/s), "
            f"spread {min(ts) * 1000:.1f}..{max(ts) * 1000:.1f} ms"
        )
    ratios.sort()
    print(
        f"  overhead:      {med_on / med_off - 1:+.1%} (median on / median off; per-round "
        f"{ratios[0] - 1:+.1%}..{ratios[-1] - 1:+.1%}; target <= +10%)"
    )
    c_off, c_on = statistics.median(cpu[False]), statistics.median(cpu[True])
    print(
        f"  server process CPU per run: off {c_off:.2f} s (spread {min(cpu[False]):.2f}.."
        f"{max(cpu[False]):.2f}), on {c_on:.2f} s (spread {min(cpu[True]):.2f}.."
        f"{max(cpu[True]):.2f}): recording {c_on / c_off - 1:+.1%}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="scorewire-runs-bench-") as state:
        env = dict(os.environ, SCOREWIRE_METRICS_ENABLED="false", SCOREWIRE_STATE_DIR=state)
        scorewire = str(Path(sys.executable).parent / "scorewire")
        proc = subprocess.Popen(
            [scorewire, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env
        )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        try:
            if "listening on" not in line:
                raise RuntimeError(f"scorewire serve did not start: {line!r}")
            address = line.rsplit(" ", 1)[1].strip()
            asyncio.run(bench(address, proc.pid, args.samples, args.rounds))
        finally:
            proc.terminate()
            proc.wait(15)


if __name__ == "__main__":
    main()
