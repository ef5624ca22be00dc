"""Load test: concurrent RunSuite streams plus steady Score traffic, and a slow reader.

Run: `.venv/bin/python bench/load_test.py` (issue 9's defaults; `--help` for the flags).
Loopback only, bounded in time and size. The server is `scorewire serve` in its own
process; this process is the client.

1. Load: `--streams` (50) tasks each run RunSuite over `--cases` (2,000) recorded
   outputs x 5 deterministic checks, again and again, for `--duration` (60) s, while
   a second client process sends Score requests at a steady `--score-rate` (100/s,
   open loop: a slow answer does not slow the arrivals; its own process so that
   parsing the streams does not delay its timing). Every stream's results are checked:
   each case index exactly once, then one summary. Reported: cases/s and checks/s
   delivered, Score latency p50/p99/max, error statuses, CPU, and the server's peak
   RSS (VmHWM).
2. Slow reader: on a fresh server, one RunSuite of `--slow-cases` (200,000) small
   cases read with `--slow-delay-ms` (20) between messages, sampling the server's RSS.
   The server pauses scoring when MAX_BUFFERED_RESULTS (`server/streaming.py`) wait
   for the reader, so RSS should stop growing once the request is in memory; the
   request itself (every case, as protobuf and as engine objects) is held for the
   whole run and is reported apart.
   A fast read of the same request on another fresh server gives the comparison.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

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
MAX_OUTSTANDING_SCORES = 2000
"""Score requests in flight at most; arrivals beyond it are counted as shed, not sent."""


# --- the server process ----------------------------------------------------------------------


def start_server(env_overrides: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    """`scorewire serve --port 0` in a child process; returns it and its address."""
    labels = Path(tempfile.mkdtemp(prefix="scorewire-load-")) / "labels.db"
    env = dict(
        os.environ,
        SCOREWIRE_METRICS_ENABLED="false",
        SCOREWIRE_LABELS_PATH=str(labels),
        SCOREWIRE_MAX_CASES_PER_REQUEST="1000000",
        SCOREWIRE_LOG_LEVEL="WARNING",
    )
    env.update(env_overrides or {})
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


def proc_status(pid: int, key: str) -> int:
    """A `VmRSS`/`VmHWM`-style line of /proc/PID/status, in bytes (0 if gone)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except OSError:
        return 0.0


class RssSampler:
    """Samples a process's VmRSS every `interval_s` on a thread."""

    def __init__(self, pid: int, interval_s: float = 0.1) -> None:
        self.pid = pid
        self.interval_s = interval_s
        self.samples: list[tuple[float, int, int]] = []
        """(seconds since start, VmRSS bytes, results delivered so far)."""
        self.delivered = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._t0 = time.monotonic()

    def _run(self) -> None:
        while not self._stop.is_set():
            rss = proc_status(self.pid, "VmRSS")
            self.samples.append((time.monotonic() - self._t0, rss, self.delivered))
            self._stop.wait(self.interval_s)

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)

    @property
    def peak(self) -> int:
        return max((s[1] for s in self.samples), default=0)


# --- requests -----------------------------------------------------------------------------------

WORDS = [
    "the",
    "refund",
    "was",
    "issued",
    "to",
    "the",
    "original",
    "card",
    "within",
    "five",
    "business",
    "days",
    "OK",
]


def suite_request(n: int, tag: str) -> pb.RunSuiteRequest:
    """n recorded outputs (prose, JSON, short answers) x 5 deterministic checks."""
    req = pb.RunSuiteRequest()
    checks = [
        ("contains", {"needles": ["refund", "OK"], "require_all": False}),
        ("regex", {"pattern": r"^OK: [0-9]{1,3}$|score"}),
        ("exact", {}),
        ("json_schema", {"schema": {"type": "object", "required": ["score"]}}),
        ("length", {"max_chars": 600, "max_words": 100}),
    ]
    for ctype, params in checks:
        req.checks.add(type=ctype).params.update(params)
    for i in range(n):
        case = req.cases.add()
        case.sample.id = f"{tag}-{i}"
        kind = i % 3
        if kind == 0:
            case.output.text = " ".join(WORDS[(i + k) % len(WORDS)] for k in range(40))
            case.sample.expected.string_value = "refund"
        elif kind == 1:
            case.output.text = f'{{"score": {i % 11}, "id": {i}}}'
            case.sample.expected.string_value = case.output.text
        else:
            case.output.text = "OK: 200"
            case.sample.expected.string_value = "Paris"
    return req


def small_request(n: int) -> pb.RunSuiteRequest:
    """n tiny cases x 2 compact checks: the slow-reader request."""
    req = pb.RunSuiteRequest(compact=["contains:x", "length:1..20"])
    for i in range(n):
        case = req.cases.add()
        case.sample.id = str(i)
        case.output.text = f"x{i}"
    return req


def score_request() -> pb.ScoreRequest:
    req = pb.ScoreRequest(
        sample=pb.Sample(id="s1"),
        output=pb.Output(text="OK: 200 — the refund was issued to the original card."),
        compact=["contains:refund", "regex:^OK: [0-9]{1,3}", "length:1..500"],
    )
    req.checks.add(type="safety.no_pii")
    return req


# --- the load run ---------------------------------------------------------------------------


@dataclass
class LoadReport:
    """What the load run measured."""

    streams: int
    cases: int
    duration_s: float
    elapsed_s: float = 0.0
    runs_completed: int = 0
    cases_delivered: int = 0
    checks_delivered: int = 0
    duplicates: int = 0
    missing: int = 0
    bad_summaries: int = 0
    stream_errors: Counter[str] = field(default_factory=Counter)
    score_latencies: list[float] = field(default_factory=list)
    score_errors: Counter[str] = field(default_factory=Counter)
    error_examples: dict[str, str] = field(default_factory=dict)
    """One error message per status code, for the report."""
    score_shed: int = 0
    server_cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    """CPU of the stream client (this process) during the run."""
    score_client_cpu_s: float = 0.0
    """CPU of the Score client process, start-up included."""
    server_rss_start: int = 0
    server_hwm: int = 0

    @property
    def exactly_once(self) -> bool:
        """Every finished run delivered each case exactly once and a right summary."""
        return not (self.duplicates or self.missing or self.bad_summaries)

    @property
    def clean(self) -> bool:
        """Exactly once, and no call ended with an error status."""
        return self.exactly_once and not self.stream_errors and not self.score_errors


async def _stream_worker(
    stub: pb_grpc.ScoringServiceStub, req: pb.RunSuiteRequest, stop_at: float, report: LoadReport
) -> None:
    n = len(req.cases)
    while time.monotonic() < stop_at:
        seen = bytearray(n)
        summary = None
        try:
            async for ev in stub.RunSuite(req, timeout=600):
                if ev.WhichOneof("event") == "results":
                    for r in ev.results.results:
                        if seen[r.index]:
                            report.duplicates += 1
                        seen[r.index] = 1
                        report.checks_delivered += len(r.scores)
                    report.cases_delivered += len(ev.results.results)
                else:
                    summary = ev.summary
        except grpc.aio.AioRpcError as err:
            report.stream_errors[err.code().name] += 1
            report.error_examples.setdefault(err.code().name, str(err.details()))
            continue
        report.missing += n - sum(seen)
        if summary is None or summary.cases != n:
            report.bad_summaries += 1
        report.runs_completed += 1


@dataclass
class ScoreTraffic:
    """What the Score client process measured."""

    latencies: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    examples: dict[str, str] = field(default_factory=dict)
    shed: int = 0


async def score_traffic(
    address: str, rate: float, start_at: float, duration_s: float
) -> ScoreTraffic:
    """Score requests at `rate`/s from wall-clock `start_at` for `duration_s` (open loop)."""
    out = ScoreTraffic()
    req = score_request()
    pending: set[asyncio.Task[None]] = set()

    async def one(stub: pb_grpc.ScoringServiceStub) -> None:
        t0 = time.perf_counter()
        try:
            resp = await stub.Score(req, timeout=60)
            if len(resp.scores) != 4:
                out.errors["WRONG_SCORE_COUNT"] += 1
        except grpc.aio.AioRpcError as err:
            out.errors[err.code().name] += 1
            out.examples.setdefault(err.code().name, str(err.details()))
            return
        out.latencies.append(time.perf_counter() - t0)

    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        await stub.Score(req, timeout=30)  # connect and warm up before the window
        await asyncio.sleep(max(0.0, start_at - time.time()))
        interval = 1.0 / rate
        next_at = time.monotonic()
        stop_at = next_at + duration_s
        while next_at < stop_at:
            if len(pending) >= MAX_OUTSTANDING_SCORES:
                out.shed += 1
            else:
                task = asyncio.create_task(one(stub))
                pending.add(task)
                task.add_done_callback(pending.discard)
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if pending:
            await asyncio.gather(*pending)
    return out


def score_client_main(address: str, rate: float, start_at: float, duration_s: float) -> None:
    """Entry of the Score client process: measure, then print the result as JSON."""
    out = asyncio.run(score_traffic(address, rate, start_at, duration_s))
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    print(
        json.dumps(
            {
                "latencies": out.latencies,
                "errors": dict(out.errors),
                "examples": out.examples,
                "shed": out.shed,
                "cpu_s": cpu.ru_utime + cpu.ru_stime,
            }
        )
    )


async def run_load(
    address: str, pid: int, *, streams: int, cases: int, duration_s: float, score_rate: float
) -> LoadReport:
    """Streams (this process) and Score traffic (a child process) for `duration_s`."""
    report = LoadReport(streams, cases, duration_s)
    requests = [suite_request(cases, f"w{k}") for k in range(streams)]
    start_at = time.time() + 2.0  # time for the Score client process to start
    scorer = await asyncio.create_subprocess_exec(
        sys.executable,
        THIS_FILE,
        "--score-client",
        address,
        str(score_rate),
        str(start_at),
        str(duration_s),
        stdout=asyncio.subprocess.PIPE,
    )
    # A few channels, as several client instances would have (one HTTP/2 connection each).
    channels = [grpc.aio.insecure_channel(address, options=OPTIONS) for _ in range(4)]
    try:
        stubs = [pb_grpc.ScoringServiceStub(ch) for ch in channels]
        await stubs[0].Score(score_request(), timeout=30)  # warm up
        await asyncio.sleep(max(0.0, start_at - time.time()))
        report.server_rss_start = proc_status(pid, "VmRSS")
        cpu0, own0, t0 = cpu_seconds(pid), _own_cpu(), time.monotonic()
        stop_at = t0 + duration_s
        await asyncio.gather(
            *(
                _stream_worker(stubs[k % len(stubs)], requests[k], stop_at, report)
                for k in range(streams)
            )
        )
        report.elapsed_s = time.monotonic() - t0
        report.server_cpu_s = cpu_seconds(pid) - cpu0
        report.client_cpu_s = _own_cpu() - own0
        report.server_hwm = proc_status(pid, "VmHWM")
        stdout, _ = await scorer.communicate()
    finally:
        if scorer.returncode is None:
            scorer.kill()
            await scorer.wait()
        for ch in channels:
            await ch.close()
    if scorer.returncode != 0:
        raise RuntimeError(f"the Score client process failed ({scorer.returncode})")
    got = json.loads(stdout)
    report.score_latencies = got["latencies"]
    report.score_errors = Counter(got["errors"])
    report.error_examples.update(got["examples"])
    report.score_shed = got["shed"]
    report.score_client_cpu_s = got["cpu_s"]
    return report


def _own_cpu() -> float:
    cpu = resource.getrusage(resource.RUSAGE_SELF)
    return cpu.ru_utime + cpu.ru_stime


# --- the slow reader ----------------------------------------------------------------------------


@dataclass
class SlowReport:
    """What one big RunSuite read at a given pace measured."""

    cases: int
    delay_s: float
    messages: int = 0
    delivered: int = 0
    duplicates: int = 0
    summary_ok: bool = False
    elapsed_s: float = 0.0
    rss_idle: int = 0
    rss_first_message: int = 0
    rss_peak: int = 0
    rss_quarter: int = 0
    hwm: int = 0
    samples: list[tuple[float, int, int]] = field(default_factory=list)

    @property
    def exactly_once(self) -> bool:
        return self.summary_ok and not self.duplicates and self.delivered == self.cases

    @property
    def bounded(self) -> bool:
        """Results did not pile up in the server while the reader lagged."""
        return self.growth_after_first < 16 * 1024 * 1024

    @property
    def growth_after_first(self) -> int:
        """How much RSS grew past its level at the first message (bounded: about 0).

        By the first message the request and its cases are in memory; what comes after
        is results waiting for the reader. Unbounded buffering of 200,000 small results
        measured +76 MiB here; the bounded buffer, +0.
        """
        return max(0, self.rss_peak - self.rss_first_message)


async def run_slow_reader(address: str, pid: int, *, cases: int, delay_s: float) -> SlowReport:
    """One RunSuite of `cases` small cases, sleeping `delay_s` after every message."""
    report = SlowReport(cases, delay_s)
    req = small_request(cases)
    report.rss_idle = proc_status(pid, "VmRSS")
    seen = bytearray(cases)
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        t0 = time.monotonic()
        with RssSampler(pid) as sampler:
            async for ev in stub.RunSuite(req, timeout=3600):
                report.messages += 1
                if report.messages == 1:
                    report.rss_first_message = proc_status(pid, "VmRSS")
                if ev.WhichOneof("event") == "results":
                    for r in ev.results.results:
                        report.duplicates += seen[r.index]
                        seen[r.index] = 1
                    report.delivered += len(ev.results.results)
                    sampler.delivered = report.delivered
                else:
                    report.summary_ok = ev.summary.cases == cases
                if delay_s:
                    await asyncio.sleep(delay_s)
        report.elapsed_s = time.monotonic() - t0
    report.delivered = sum(seen)
    report.samples = sampler.samples
    report.rss_peak = sampler.peak
    quarter = [s for s in sampler.samples if s[2] >= cases // 4]
    if quarter:
        report.rss_quarter = quarter[0][1]
    report.hwm = proc_status(pid, "VmHWM")
    return report


# --- reporting -----------------------------------------------------------------------------------


def mib(n: int) -> str:
    return f"{n / 1024 / 1024:,.1f} MiB"


def pct(values: list[float], q: int) -> float:
    if len(values) < 2:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] * 1000


def print_load(r: LoadReport, score_rate: float) -> None:
    rate = r.elapsed_s or 1.0
    lat = r.score_latencies
    errors = f"streams {dict(r.stream_errors) or 'none'}, Score {dict(r.score_errors) or 'none'}"
    print(f"Load: {r.streams} RunSuite streams x {r.cases:,} cases x 5 checks, repeated, plus")
    print(f"      Score at {score_rate:g}/s (open loop), for {r.duration_s:g} s")
    print(f"  elapsed            {r.elapsed_s:8.1f} s (the last runs finish after the window)")
    print(f"  RunSuite runs      {r.runs_completed:8,d} completed")
    print(
        f"  cases delivered    {r.cases_delivered:8,d}  {r.cases_delivered / rate:10,.0f} cases/s"
        f"  {r.checks_delivered / rate:10,.0f} checks/s"
    )
    print(f"  Score              {len(lat):8,d} ok   {len(lat) / rate:8.1f} req/s")
    print(
        f"  Score latency      p50 {pct(lat, 50):.1f} ms  p99 {pct(lat, 99):.1f} ms  "
        f"max {max(lat, default=0) * 1000:.1f} ms"
    )
    if r.score_shed:
        print(f"  Score shed         {r.score_shed:8,d} (over {MAX_OUTSTANDING_SCORES} in flight)")
    print(f"  error statuses     {errors}")
    for code, details in r.error_examples.items():
        print(f"    {code}: {details[:200]}")
    print(
        f"  exactly once       {'yes' if r.exactly_once else 'NO'} "
        f"(duplicates {r.duplicates}, missing {r.missing}, bad summaries {r.bad_summaries})"
    )
    print(f"  server CPU         {r.server_cpu_s:8.1f} s ({r.server_cpu_s / rate:.0%} of one core)")
    print(
        f"  client CPU         streams {r.client_cpu_s:.1f} s ({r.client_cpu_s / rate:.0%}), "
        f"Score process {r.score_client_cpu_s:.1f} s"
    )
    print(
        f"  server RSS         {mib(r.server_rss_start)} at start, peak (VmHWM) {mib(r.server_hwm)}"
    )


def print_slow(slow: SlowReport, fast: SlowReport | None) -> None:
    yes = {True: "yes", False: "NO"}
    print(
        f"Slow reader: one RunSuite of {slow.cases:,} small cases x 2 checks, "
        f"{slow.delay_s * 1000:g} ms sleep per message"
    )
    print(
        f"  delivered          {slow.delivered:,} in {slow.messages:,} messages, "
        f"{slow.elapsed_s:.1f} s; exactly once: {yes[slow.exactly_once]}"
    )
    print(f"  server RSS idle    {mib(slow.rss_idle)}")
    print(f"  at first message   {mib(slow.rss_first_message)} (the request's cases are held)")
    print(f"  at 1/4 delivered   {mib(slow.rss_quarter)}")
    print(f"  peak while reading {mib(slow.rss_peak)} (+{mib(slow.growth_after_first)})")
    print(f"  peak (VmHWM)       {mib(slow.hwm)}")
    step = max(1, len(slow.samples) // 8)
    points = [f"{t:.0f}s {mib(rss)} ({d:,} read)" for t, rss, d in slow.samples[::step]]
    print("  timeline           " + ", ".join(points))
    if fast is not None:
        print(
            f"  fast reader        peak (VmHWM) {mib(fast.hwm)} on a fresh server, "
            f"{fast.elapsed_s:.1f} s; exactly once: {yes[fast.exactly_once]}"
        )
    print(f"  bounded            {yes[slow.bounded]} (RSS growth after the first message < 16 MiB)")


def main() -> int:
    parser = argparse.ArgumentParser(
        description="scorewire load test (loopback only)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--streams", type=int, default=50, help="concurrent RunSuite streams")
    parser.add_argument("--cases", type=int, default=2000, help="cases per RunSuite")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--score-rate", type=float, default=100.0, help="Score requests per second")
    parser.add_argument("--slow-cases", type=int, default=200_000, help="cases of the slow read")
    parser.add_argument("--slow-delay-ms", type=float, default=20.0, help="sleep per message")
    parser.add_argument("--skip-load", action="store_true", help="only the slow reader")
    parser.add_argument("--skip-slow", action="store_true", help="only the load run")
    parser.add_argument("--no-fast-compare", action="store_true", help="skip the fast read")
    parser.add_argument("--score-client", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.score_client:
        address, rate, start_at, duration = args.score_client
        score_client_main(address, float(rate), float(start_at), float(duration))
        return 0
    ok = True
    if not args.skip_load:
        proc, address = start_server()
        try:
            report = asyncio.run(
                run_load(
                    address,
                    proc.pid,
                    streams=args.streams,
                    cases=args.cases,
                    duration_s=args.duration,
                    score_rate=args.score_rate,
                )
            )
        finally:
            stop_server(proc)
        print_load(report, args.score_rate)
        ok = ok and report.clean
    if not args.skip_slow:
        proc, address = start_server()
        try:
            slow = asyncio.run(
                run_slow_reader(
                    address, proc.pid, cases=args.slow_cases, delay_s=args.slow_delay_ms / 1000
                )
            )
        finally:
            stop_server(proc)
        fast = None
        if not args.no_fast_compare:
            proc, address = start_server()
            try:
                fast = asyncio.run(
                    run_slow_reader(address, proc.pid, cases=args.slow_cases, delay_s=0)
                )
            finally:
                stop_server(proc)
        print_slow(slow, fast)
        ok = ok and slow.exactly_once and slow.bounded and (fast is None or fast.exactly_once)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
