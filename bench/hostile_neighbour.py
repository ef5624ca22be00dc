"""Hostile neighbour: one well-behaved caller while another sends the worst requests.

Run: `.venv/bin/python bench/hostile_neighbour.py` (or `make bench-hostile`). Loopback
only, bounded in count and time: `--rounds` (1) passes over the attacks of issue 13,
each with a `--deadline` (10 s), sent one after another.

The server is `scorewire serve` in its own process. A second process (the neighbour)
sends a small Score at a steady `--rate` (50/s, open loop) for the whole attack, and
this process is the attacker. Reported: the neighbour's p50/p99/max latency and failed
calls, every attack's status and time, and the server's peak RSS with its children (the
scoring workers and their forkserver), sampled every 50 ms.

Targets (issue 13): neighbour p99 < 50 ms and no failed call; peak RSS under
`--rss-bound-mb` (500); every attack ends within its deadline (plus a 1 s margin for the
transport) or with RESOURCE_EXHAUSTED. The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
THIS_FILE = str(Path(__file__).resolve())
sys.path[:0] = [str(ROOT / "clients/python/src")]

import grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
TEN_MB = 10_000_000
MARGIN_S = 1.0
"""An attack may end this long after its deadline (the transport's own latency)."""


# --- the server and its process tree ------------------------------------------------------------


def start_server(workers: int | None) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port 0` in a child process; returns it and its address."""
    # The server's defaults, metrics on (on a free port), as users run it; its state (the
    # label store) in a directory of its own rather than a fixed /tmp path.
    env = dict(os.environ, SCOREWIRE_METRICS_PORT="0", SCOREWIRE_LOG_LEVEL="ERROR")
    env["SCOREWIRE_STATE_DIR"] = tempfile.mkdtemp(prefix="scorewire-hostile-")
    if workers:
        env["SCOREWIRE_SCORING_WORKERS"] = str(workers)
    scorewire = str(Path(sys.executable).parent / "scorewire")
    proc = subprocess.Popen(
        [scorewire, "serve", "--port", "0"], stdout=subprocess.PIPE, text=True, env=env
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"scorewire serve did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def stop_server(proc: subprocess.Popen[str]) -> None:
    """SIGTERM and wait (SIGKILL after 20 s)."""
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _children(pid: int) -> list[int]:
    out = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                out.extend(int(c) for c in f.read().split())
    except OSError:
        pass
    return out


def tree_rss(pid: int) -> int:
    """VmRSS of `pid` and all its descendants, in bytes (shared pages count in each)."""
    total, todo = 0, [pid]
    while todo:
        p = todo.pop()
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1]) * 1024
        except OSError:
            continue
        todo.extend(_children(p))
    return total


class RssSampler:
    """The peak of `tree_rss(pid)`, sampled every `interval_s` on a thread."""

    def __init__(self, pid: int, interval_s: float = 0.05) -> None:
        self.pid, self.interval_s, self.peak = pid, interval_s, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, tree_rss(self.pid))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


# --- the well-behaved neighbour (its own process) ------------------------------------------------


def neighbour_request() -> pb.ScoreRequest:
    """A small Score: three deterministic checks on a short answer."""
    req = pb.ScoreRequest(compact=["contains:refund", "length:1..200"])
    req.checks.add(type="regex").params.update({"pattern": r"within \d+ days"})
    req.output.text = "The refund was issued to the original card within 5 days."
    return req


async def neighbour(address: str, rate: float, start_at: float) -> dict[str, Any]:
    """Score at `rate`/s (open loop) from `start_at` until a line arrives on stdin."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    stop = asyncio.ensure_future(reader.readline())
    latencies: list[float] = []
    sent_at: list[float] = []
    errors: Counter[str] = Counter()
    pending: set[asyncio.Task[None]] = set()
    req = neighbour_request()

    async def one(stub: pb_grpc.ScoringServiceStub) -> None:
        started = time.time()
        t0 = time.perf_counter()
        try:
            resp = await stub.Score(req, timeout=10)
            if len(resp.scores) != 3 or not resp.passed:
                errors["WRONG_ANSWER"] += 1
                return
        except grpc.aio.AioRpcError as err:
            errors[err.code().name] += 1
            return
        latencies.append(time.perf_counter() - t0)
        sent_at.append(started)

    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        for _ in range(10):  # connect; bursts, so that every worker compiles the plan
            await asyncio.gather(*(stub.Score(req, timeout=30) for _ in range(8)))
        await asyncio.sleep(max(0.0, start_at - time.time()))
        interval, next_at = 1.0 / rate, time.monotonic()
        while not stop.done():
            task = asyncio.create_task(one(stub))
            pending.add(task)
            task.add_done_callback(pending.discard)
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if pending:
            await asyncio.gather(*pending)
    return {"latencies": latencies, "sent_at": sent_at, "errors": dict(errors)}


# --- the attacks --------------------------------------------------------------------------------


def _spec(ctype: str, **params: Any) -> pb.CheckSpec:
    spec = pb.CheckSpec(type=ctype)
    spec.params.update(params)
    return spec


def attacks() -> list[tuple[str, str, Any]]:
    """(name, method, request): the worst requests issue 13 lists."""
    items = json.dumps([{"id": i, "v": "x"} for i in range(10_000)])
    unique = _spec("json_schema", schema={"type": "array", "uniqueItems": True})
    props = {
        f"p{i}": {"type": "string", "pattern": f"^(a|b|c){{1,{700 + i}}}x$"} for i in range(300)
    }
    patterns = _spec("json_schema", schema={"type": "object", "properties": props})
    regexes = [_spec("regex", pattern=f"(x{i}|y)+[a-z]{{1,{900 + i}}}z") for i in range(64)]
    prose = ("the quick brown fox jumps over the lazy dog " * (TEN_MB // 44 + 1))[:TEN_MB]
    needles = _spec("contains", needles=[f"needle-{i:05d}" for i in range(5_000)])
    tokens = [_spec("max_tokens", value=1_000_000) for _ in range(64)]
    bleus = [_spec("bleu", value="the quick brown fox") for _ in range(64)]
    suite = pb.RunSuiteRequest(
        checks=[_spec("regex", pattern=rf"\\b{w}\\b") for w in ("fox", "dog", "cat", "owl")]
        + [_spec("contains", needles=["quick", "lazy"]), _spec("word_count", value=500)],
    )
    for i in range(40_000):
        case = suite.cases.add()
        case.sample.id = str(i)
        case.output.text = prose[: 600 + i % 400]
    return [
        ("RunSuite 40,000 cases x 6 checks", "RunSuite", suite),
        ("uniqueItems x 10,000 objects", "Score", pb.ScoreRequest(
            checks=[unique], output=pb.Output(text=items))),
        ("300 patterns (Score)", "Score", pb.ScoreRequest(
            checks=[patterns], output=pb.Output(text="{}"))),
        ("300 patterns (ValidateSuite)", "ValidateSuite", pb.ValidateSuiteRequest(
            checks=[patterns])),
        ("64 regex checks", "Score", pb.ScoreRequest(
            checks=regexes, output=pb.Output(text="x"))),
        ("10 MB x 5,000 needles", "Score", pb.ScoreRequest(
            checks=[needles], output=pb.Output(text=prose))),
        ("10 MB x 64 max_tokens", "Score", pb.ScoreRequest(
            checks=tokens, output=pb.Output(text=prose))),
        ("10 MB x 64 bleu", "Score", pb.ScoreRequest(
            checks=bleus, output=pb.Output(text=prose))),
    ]  # fmt: skip


@dataclass
class Attack:
    """How one attack request ended."""

    name: str
    code: str
    started_at: float
    seconds: float
    ok: bool
    detail: str = ""


@dataclass
class Report:
    """Everything the run measured."""

    attacks: list[Attack] = field(default_factory=list)
    neighbour: dict[str, Any] = field(default_factory=dict)
    peak_rss: int = 0


async def attack(address: str, rounds: int, deadline_s: float) -> list[Attack]:
    """Send every attack `rounds` times, one after another."""
    out = []
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        for _ in range(rounds):
            for name, method, req in attacks():
                t0, wall = time.monotonic(), time.time()
                try:
                    call = getattr(stub, method)(req, timeout=deadline_s)
                    if method == "RunSuite":
                        async for _ in call:
                            pass
                    else:
                        await call
                    code, detail = "OK", ""
                except grpc.aio.AioRpcError as err:
                    code, detail = err.code().name, str(err.details())[:120]
                took = time.monotonic() - t0
                ok = code == "RESOURCE_EXHAUSTED" or took <= deadline_s + MARGIN_S
                out.append(Attack(name, code, wall, took, ok, detail))
    return out


async def run(args: argparse.Namespace) -> Report:
    proc, address = start_server(args.workers)
    report = Report()
    try:
        start_at = time.time() + 3.0
        nb = await asyncio.create_subprocess_exec(
            sys.executable,
            THIS_FILE,
            "--neighbour",
            address,
            str(args.rate),
            str(start_at),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        with RssSampler(proc.pid) as rss:
            await asyncio.sleep(max(0.0, start_at - time.time()) + 1.0)
            quiet_at = time.time()
            await asyncio.sleep(args.quiet_s)
            report.attacks = [Attack("(quiet: no attack)", "-", quiet_at, args.quiet_s, True)]
            report.attacks += await attack(address, args.rounds, args.deadline)
            await asyncio.sleep(1.0)  # the neighbour's last calls land
            stdout, _ = await nb.communicate(b"stop\n")
            report.neighbour = json.loads(stdout)
            report.peak_rss = rss.peak
    finally:
        stop_server(proc)
    return report


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def summarise(report: Report, args: argparse.Namespace) -> bool:
    lat = report.neighbour["latencies"]
    errors = report.neighbour["errors"]
    p50, p99 = _pct(lat, 0.5) * 1000, _pct(lat, 0.99) * 1000
    failed = sum(errors.values())
    rss_mb = report.peak_rss / 2**20
    late = [a for a in report.attacks if not a.ok]
    sent = report.neighbour["sent_at"]
    print(f"  {'attack':<30} {'status':<20} {'time':>8}   neighbour p99 meanwhile")
    for a in report.attacks:
        during = [
            x
            for x, t in zip(lat, sent, strict=True)
            if a.started_at <= t <= a.started_at + a.seconds
        ]
        print(
            f"  {a.name:<30} {a.code:<20} {a.seconds:6.2f} s   {_pct(during, 0.99) * 1000:6.1f} ms"
            f" ({len(during)} calls){'' if a.ok else ' LATE'}"
        )
    print(
        f"neighbour: {len(lat)} calls ok, {failed} failed {errors or ''}; "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(lat, default=0) * 1000:.1f} ms "
        f"(mean {statistics.fmean(lat) * 1000 if lat else float('nan'):.1f} ms)"
    )
    print(f"server peak RSS, children included: {rss_mb:.0f} MB (bound {args.rss_bound_mb} MB)")
    print(f"attacks: {len(report.attacks)}, within deadline or RESOURCE_EXHAUSTED: "
          f"{len(report.attacks) - len(late)}")  # fmt: skip
    targets = {
        "neighbour p99 < 50 ms": p99 < 50,
        "no failed neighbour call": failed == 0,
        f"peak RSS < {args.rss_bound_mb} MB": rss_mb < args.rss_bound_mb,
        "every attack ends in time or RESOURCE_EXHAUSTED": not late,
    }
    for name, met in targets.items():
        print(f"  {'met   ' if met else 'MISSED'} {name}")
    return all(targets.values())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=1, help="passes over the attacks (1)")
    parser.add_argument("--deadline", type=float, default=10.0, help="attack deadline, s (10)")
    parser.add_argument("--rate", type=float, default=50.0, help="neighbour Score/s (50)")
    parser.add_argument("--workers", type=int, default=None, help="scoring workers (cores)")
    parser.add_argument("--quiet-s", type=float, default=5.0, help="baseline window, s (5)")
    parser.add_argument("--rss-bound-mb", type=int, default=500, help="RSS bound, MB (500)")
    parser.add_argument("--neighbour", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.neighbour:
        address, rate, start_at = args.neighbour
        print(json.dumps(asyncio.run(neighbour(address, float(rate), float(start_at)))))
        return 0
    print(f"hostile neighbour: {args.rounds} round(s), attack deadline {args.deadline:g} s, "
          f"neighbour {args.rate:g} Score/s")  # fmt: skip
    report = asyncio.run(run(args))
    return 0 if summarise(report, args) else 1


if __name__ == "__main__":
    sys.exit(main())
