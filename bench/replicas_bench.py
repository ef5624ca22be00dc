"""One batch over one replica versus three: `run_suite(..., shards=N)` end to end.

Run: `PYTHONPATH=service:clients/python/src .venv/bin/python bench/replicas_bench.py`
(loopback only, bounded: `--cases` (60,000) cases × 5 deterministic compact checks,
`--rounds` (2) alternating runs per replica count).

Each replica is `scorewire serve` in its own process with the server's defaults
(scoring workers: one per core). The client, in this process, runs the batch with
`shards` chunks in flight over a round-robin channel to every replica (`--shards`, 6;
chunks of `--chunk-cases`, 5,000). Reported per run: wall time, cases/s and checks/s,
and where the CPU time went: this client process, and each replica (its server
process and its scoring workers), against the CPU the machine had in that time (wall ×
cores). The ratio printed last is three replicas' throughput over one replica's.

On a machine with fewer cores than replicas plus the client, more replicas cannot be
faster: they share the same cores, and the report shows it (CPU used ≈ CPU available).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "clients/python/src")]

from scorewire.client import Client  # noqa: E402

COMPACT = ["contains:Paris", "length:1..500", "contains:France", "regex:\\d+", "exact:no"]
TICKS = os.sysconf("SC_CLK_TCK")
READY = "scorewire listening on "


def start_replica() -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port 0` with its defaults, metrics on a free port."""
    env = dict(os.environ, SCOREWIRE_METRICS_PORT="0", SCOREWIRE_LOG_LEVEL="ERROR")
    env["SCOREWIRE_STATE_DIR"] = tempfile.mkdtemp(prefix="scorewire-replicas-bench-")
    exe = str(Path(sys.executable).parent / "scorewire")
    proc = subprocess.Popen(
        [exe, "serve", "--host", "127.0.0.1", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith(READY):
        proc.kill()
        raise SystemExit(f"scorewire serve did not start: {line!r}")
    return proc, line[len(READY) :].strip()


def _stat(pid: int) -> tuple[int, float, float]:
    """(ppid, own CPU s, waited-for children's CPU s) of `pid` from /proc."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ppid = int(fields[1])
    own = (int(fields[11]) + int(fields[12])) / TICKS
    children = (int(fields[13]) + int(fields[14])) / TICKS
    return ppid, own, children


def tree_cpu(root: int) -> tuple[float, float]:
    """CPU seconds of `root` itself and of all its descendants (live or reaped)."""
    stats = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stats[int(entry)] = _stat(int(entry))
            except OSError:
                continue
    own = stats[root][1]
    descendants = stats[root][2]
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (ppid, cpu, reaped) in stats.items():
            if ppid == parent:
                descendants += cpu + (reaped if pid != root else 0)
                frontier.append(pid)
    return own, descendants


def cases(n: int) -> list[dict[str, object]]:
    """`n` small cases, most passing every check."""
    return [
        {"sample": {"id": f"c{i}"}, "output": f"answer {i}: Paris is the capital of France"}
        for i in range(n)
    ]


@dataclass
class Result:
    replicas: int
    wall_s: float
    cases_per_s: float
    client_cpu_s: float
    replica_cpu_s: list[tuple[float, float]]


def run_once(n_replicas: int, batch: list[dict[str, object]], args: argparse.Namespace) -> Result:
    procs = [start_replica() for _ in range(n_replicas)]
    try:
        addresses = [address for _, address in procs]
        before = [tree_cpu(p.pid) for p, _ in procs]
        with Client(addresses, timeout=600) as client:
            client.list_checks()  # connect before the clock starts
            t0, c0 = time.perf_counter(), time.process_time()
            run = client.run_suite(
                batch, compact=COMPACT, shards=args.shards, chunk_cases=args.chunk_cases
            )
            results, summary = run.collect()
            wall, client_cpu = time.perf_counter() - t0, time.process_time() - c0
        after = [tree_cpu(p.pid) for p, _ in procs]
        assert summary.cases == len(batch) == len(results), (summary.cases, len(results))
        assert sorted(r.index for r in results) == list(range(len(batch)))
        cpu = [(a[0] - b[0], a[1] - b[1]) for a, b in zip(after, before, strict=True)]
        return Result(n_replicas, wall, len(batch) / wall, client_cpu, cpu)
    finally:
        for p, _ in procs:
            p.terminate()
        for p, _ in procs:
            p.wait(30)


def report(r: Result, checks: int) -> None:
    cores = os.cpu_count() or 1
    serving = sum(a + b for a, b in r.replica_cpu_s)
    used = serving + r.client_cpu_s
    per = ", ".join(f"r{i} {a:.1f}+{b:.1f}" for i, (a, b) in enumerate(r.replica_cpu_s))
    print(
        f"{r.replicas} replica(s): {r.wall_s:6.2f} s, {r.cases_per_s:8,.0f} cases/s, "
        f"{r.cases_per_s * checks:9,.0f} checks/s | CPU s: client {r.client_cpu_s:.1f}, "
        f"replicas (server+workers) {per}; used {used:.1f} of {r.wall_s * cores:.1f} "
        f"available ({used / (r.wall_s * cores):.0%}); load after {os.getloadavg()[0]:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--cases", type=int, default=60_000)
    parser.add_argument("--shards", type=int, default=6)
    parser.add_argument("--chunk-cases", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    batch = cases(args.cases)
    print(
        f"{args.cases:,} cases × {len(COMPACT)} checks, shards {args.shards}, chunks of "
        f"{args.chunk_cases:,}, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )
    by: dict[int, list[Result]] = {1: [], 3: []}
    for _ in range(args.rounds):
        for n in (1, 3):
            result = run_once(n, batch, args)
            by[n].append(result)
            report(result, len(COMPACT))
    one = statistics.median(r.cases_per_s for r in by[1])
    three = statistics.median(r.cases_per_s for r in by[3])
    print(f"three replicas / one replica (median throughput): {three / one:.2f}×")


if __name__ == "__main__":
    main()
