"""The server's CPU per unary Score: the e2e bench's Score row, counted in CPU time.

    .venv/bin/python bench/score_server_cpu.py [--calls 20000] [--rounds 3]

Starts `scorewire serve` (its defaults, metrics on, as `bench/e2e_bench.py` does), warms
it up with the e2e bench's Score request (three deterministic checks), then sends
`--calls` of them from a grpc.aio client, 32 in flight, and prints the CPU time the
server process spent (user + system, every thread: grpc's own work included) per call,
for each round. CPU time, not wall time: on a machine shared with other work the numbers
do not depend on who else runs. `bench/score_cpu.py` splits the handler's share by step.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients/python/src"), str(ROOT / "bench")]

from e2e_bench import (  # noqa: E402
    SCORE_CHECKS,
    SCORE_OUTPUT,
    SCORE_SAMPLE,
    server_env,
    start,
    stop,
)

_TICK = os.sysconf("SC_CLK_TCK")

_WITHOUT_PLAN_WIRE = (
    "import sys; import scorewire.server.service as s; "
    "s.score_plan_wire = lambda raw: None; "
    "from scorewire.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def cpu_seconds(pid: int) -> float:
    """User + system CPU of a process, every thread, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


async def _calls(addr: str, n: int, concurrency: int) -> None:
    import grpc
    from scorewire.client import _convert
    from scorewire.v1 import scoring_pb2_grpc as pb_grpc

    req = _convert.score_request(
        output=SCORE_OUTPUT, sample=SCORE_SAMPLE, checks=SCORE_CHECKS, compact=None, budget_usd=None
    )
    async with grpc.aio.insecure_channel(addr) as channel:
        stub = pb_grpc.ScoringServiceStub(channel)
        left = n

        async def lane() -> None:
            nonlocal left
            while left > 0:
                left -= 1
                await stub.Score(req, timeout=60)

        await asyncio.gather(*(lane() for _ in range(concurrency)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--plan-key",
        choices=("wire", "checks"),
        default="wire",
        help="the plan's memo key: its wire bytes (score_plan_wire, as Score does), or "
        "each check serialized (score_plan_wire bypassed)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as state:
        cmd = [sys.executable, "-m", "scorewire.cli.main", "serve", "--port", "0"]
        if args.plan_key == "checks":
            cmd[1:3] = ["-c", _WITHOUT_PLAN_WIRE]
        # This tree's code, before anything else on the caller's path (a kernel built
        # elsewhere, say).
        path = [str(ROOT / "service"), str(ROOT / "clients/python/src")]
        path.append(os.environ.get("PYTHONPATH", ""))
        proc, addr = start(cmd, server_env(state, PYTHONPATH=os.pathsep.join(path)))
        try:
            asyncio.run(_calls(addr, 500, 32))  # warm up: plan cache, inline scoring
            for _ in range(args.rounds):
                before = cpu_seconds(proc.pid)
                asyncio.run(_calls(addr, args.calls, 32))
                per_call = (cpu_seconds(proc.pid) - before) / args.calls * 1e6
                print(f"{per_call:7.1f} µs of server CPU per Score call", flush=True)
        finally:
            stop(proc)


if __name__ == "__main__":
    main()
