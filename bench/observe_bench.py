"""Observations acknowledged per second and lag to score on one server: the SQLite, Redis
Streams and PostgreSQL queues side by side, in the same invocation, on the same data.

Run: `.venv/bin/python bench/observe_bench.py` (`--help` for the flags). Loopback only,
bounded: `--runs` (3) rounds; in each, every engine gets `--seconds` (5) flat out and
`--steady` (5) s at a steady rate, each phase followed by at most `--drain` (60) s for
the consumer to finish.

The data is made once, before any clock starts: `--observations` (300,000) observations
in batches of `--batch` (100), with trace ids from a fixed seed, so every engine gets the
same requests in the same order and its rule samples the same traces. One rule samples
10% of traces for two deterministic checks. Each round runs every engine once, the order
rotated from round to round so none always goes first; each run is a fresh `scorewire
serve` process on a fresh queue: the embedded SQLite file under a new state directory
(synchronous FULL), a Redis emptied before the run (AOF on, `everysec`, as production
runs it), a new PostgreSQL database (stock settings, `fsync` and `synchronous_commit`
on). The run store is the state directory's SQLite file for all three.

Flat out: `--callers` (8) concurrent Observe calls, each sent once the one before was
answered. Reported: observations acknowledged per second, calls per second,
observations consumed per second (from the first call until the consumer had weighed
the last one against the rule), how many the rule scored, and the lag from observation
to score, which here is mostly the backlog the intake built faster than the consumer
took it. Steady: once drained, `--rate` (2,000) observations per second, sent open-loop
(the data's last requests, the same for every engine), a rate every engine's consumer
keeps up with; reported is the lag then, the queue's own delay. Lags are p50 and p99
interpolated in the server's `scorewire_observe_lag_seconds` buckets (0.05, 0.1, 0.25,
0.5, 1, 2.5, 5, 10, 30 s, ...) as Prometheus's `histogram_quantile` does, so they are as
coarse as the buckets. Each line ends with the 1-minute load average after the run (the
machine may be shared). Then, per engine, the median and the range of each figure across
runs, as a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import grpc
from scorewire.v1 import observe_pb2 as opb

from tests.support.postgres import PostgresCluster, _pg_bindir
from tests.support.redis import RedisServer
from tests.support.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("sqlite", "redis", "postgres")
RULES = """rules:
  - name: bench
    compact: ["contains:Paris", "length:1..200"]
    sampling_rate: 0.1
"""
OBSERVE = "/scorewire.v1.ObserveService/Observe"


@dataclass
class Run:
    """One engine's figures in one round."""

    engine: str
    round: int
    acked_per_s: float
    calls_per_s: float
    consumed_per_s: float
    acked: int
    scored: int
    p50: float
    p99: float
    steady_p50: float
    steady_p99: float
    load: float
    drained: bool


def make_data(observations: int, batch: int, seed: int) -> list[bytes]:
    """Serialized ObserveRequests of `batch` observations each (ids and traces from `seed`)."""
    rng = random.Random(seed)
    out = []
    for b in range(observations // batch):
        request = opb.ObserveRequest()
        for i in range(batch):
            o = request.observations.add(observation_id=f"b{b}-{i}")
            o.output.text = "The capital of France is Paris."
            o.trace.trace_id = f"{rng.getrandbits(128):032x}"
            o.metadata.route = "/bench"
        out.append(request.SerializeToString())
    return out


def _metrics(port: int) -> dict[str, float]:
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    out: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("scorewire_observe_"):
            name, _, value = line.rpartition(" ")
            out[name] = float(value)
    return out


def _since(m: dict[str, float], before: dict[str, float]) -> dict[str, float]:
    """The counters of `m` less what they were in `before` (one phase's histogram)."""
    return {k: v - before.get(k, 0.0) for k, v in m.items()}


def quantile(q: float, m: dict[str, float]) -> float:
    """The lag's q-quantile as `histogram_quantile` computes it (linear in its bucket;
    the highest finite bound when it falls in +Inf); NaN with no observation."""
    buckets = sorted(
        (float("inf") if "+Inf" in k else float(k.split('le="')[1].split('"')[0]), v)
        for k, v in m.items()
        if k.startswith("scorewire_observe_lag_seconds_bucket")
    )
    if not buckets or not buckets[-1][1]:
        return float("nan")
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for bound, n in buckets:
        if n >= rank:
            if bound == float("inf"):
                return lower
            return lower + (bound - lower) * (rank - below) / max(n - below, 1e-9)
        lower, below = bound, n
    return lower


async def _load(address: str, data: list[bytes], callers: int, seconds: float) -> tuple[int, int]:
    """(observations acknowledged, calls) in `seconds` from `callers` concurrent loops,
    each sending the next request of `data`."""
    channel = grpc.aio.insecure_channel(address)
    observe = channel.unary_unary(  # the requests are serialized already
        OBSERVE, request_serializer=bytes, response_deserializer=opb.ObserveResponse.FromString
    )
    deadline = time.monotonic() + seconds
    requests = iter(data)
    acked = calls = 0

    async def caller() -> None:
        nonlocal acked, calls
        for request in requests:
            answer = await observe(request, timeout=30)
            acked += sum(a.status == opb.OBSERVATION_STATUS_QUEUED for a in answer.acks)
            calls += 1
            if time.monotonic() >= deadline:
                return
        print("  (the data ran out before the time: raise --observations)", flush=True)

    await asyncio.gather(*(caller() for _ in range(callers)))
    await channel.close()
    return acked, calls


async def _steady(address: str, data: list[bytes], rate_calls: float, seconds: float) -> int:
    """Send `data`'s requests open-loop at `rate_calls` per second for `seconds`: each
    call starts on time whether or not the ones before were answered; calls made."""
    channel = grpc.aio.insecure_channel(address)
    observe = channel.unary_unary(
        OBSERVE, request_serializer=bytes, response_deserializer=opb.ObserveResponse.FromString
    )
    loop = asyncio.get_running_loop()
    start = loop.time()
    calls = []
    for k, request in enumerate(data[: int(rate_calls * seconds)]):
        await asyncio.sleep(max(0.0, start + k / rate_calls - loop.time()))
        calls.append(asyncio.ensure_future(observe(request, timeout=30)))
    await asyncio.gather(*calls)
    await channel.close()
    return len(calls)


def _serve(env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(
        [str(ROOT / ".venv/bin/scorewire"), "serve", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    if "listening" not in line:
        proc.kill()
        raise SystemExit(f"the server did not start: {line!r}")
    return proc


def _drain(mport: int, acked: int, limit_s: float) -> tuple[dict[str, float], float, bool]:
    """Wait until the consumer has weighed every acknowledged observation, then until the
    queue reads empty (its gauge is read once a second: the last scores are recorded);
    (the metrics then, seconds until every observation was weighed, whether both came)."""
    started = time.monotonic()
    weighed = None
    while time.monotonic() - started <= limit_s:
        m = _metrics(mport)
        if weighed is None and m.get('scorewire_observe_observed_total{rule="bench"}', 0) >= acked:
            weighed = time.monotonic() - started
        if weighed is not None and m.get("scorewire_observe_queue_depth", 1.0) == 0:
            return m, weighed, True
        time.sleep(0.05)
    return m, time.monotonic() - started, False


def run_engine(name: str, rnd: int, env_extra: dict[str, str], data: list[bytes], args) -> Run:
    with tempfile.TemporaryDirectory() as state:
        Path(state, "rules.yaml").write_text(RULES, encoding="utf-8")
        port, mport = free_port(), free_port()
        env = {
            "SCOREWIRE_STATE_DIR": state,
            "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml",
            "SCOREWIRE_METRICS_PORT": str(mport),
            "SCOREWIRE_OBSERVE_QUEUE_MAX": "10000000",
            **env_extra,
        }
        proc = _serve(env, port)
        try:
            address = f"127.0.0.1:{port}"
            # the steady phase's requests are the data's last ones, the same for every
            # engine, and never sent flat out (they would be duplicates)
            steady_data = data[-int(args.rate / args.batch * args.steady) :]
            flat_data = data[: len(data) - len(steady_data)]
            started = time.monotonic()
            acked, calls = asyncio.run(_load(address, flat_data, args.callers, args.seconds))
            loaded = time.monotonic() - started
            m, waited, drained = _drain(mport, acked, args.drain)
            steady_calls = asyncio.run(
                _steady(address, steady_data, args.rate / args.batch, args.steady)
            )
            steady_acked = acked + steady_calls * args.batch
            after, _, steady_drained = _drain(mport, steady_acked, args.drain)
            steady = _since(after, m)
        finally:
            proc.terminate()
            proc.wait(30)
    scored = sum(v for k, v in m.items() if k.startswith("scorewire_observe_scored_total"))
    return Run(
        name,
        rnd,
        acked / loaded,
        calls / loaded,
        acked / (loaded + waited),
        acked,
        int(scored),
        quantile(0.5, m),
        quantile(0.99, m),
        quantile(0.5, steady),
        quantile(0.99, steady),
        os.getloadavg()[0],
        drained and steady_drained,
    )


class Engines:
    """The external engines for the whole invocation, and a fresh queue on each per run."""

    def __init__(self, stack: ExitStack) -> None:
        aof = stack.enter_context(tempfile.TemporaryDirectory())
        os.chdir(aof)  # redis-server writes its append-only file in its working directory
        self.redis = stack.enter_context(RedisServer())
        self._redis_cli("CONFIG", "SET", "appendonly", "yes")
        self._redis_cli("CONFIG", "SET", "appendfsync", "everysec")
        assert self._redis_cli("CONFIG", "GET", "appendonly").split() == ["appendonly", "yes"]
        bindir = _pg_bindir()
        if bindir is None:
            raise SystemExit("PostgreSQL's initdb and pg_ctl are not installed (make test-deps)")
        self.pg = PostgresCluster(bindir)
        stack.callback(self.pg.destroy)
        self.pg.init()
        self.pg.start()

    def _redis_cli(self, *words: str) -> str:
        cmd = ["redis-cli", "-p", str(self.redis.port), *words]
        return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout

    def env(self, engine: str, rnd: int) -> dict[str, str]:
        """The settings of a run on a queue nothing was written to."""
        if engine == "redis":
            self._redis_cli("FLUSHALL")
            return {"SCOREWIRE_OBSERVE_QUEUE_URL": self.redis.url}
        if engine == "postgres":
            return {"SCOREWIRE_OBSERVE_QUEUE_URL": self.pg.create_database(f"bench_{rnd}")}
        return {}


def _fmt_s(x: float) -> str:
    return "-" if x != x else f"{x:.2f}"


def _cell(values: list[float], fmt: str) -> str:
    med, lo, hi = statistics.median(values), min(values), max(values)
    return f"{fmt.format(med)} [{fmt.format(lo)}–{fmt.format(hi)}]"


def report(runs: list[Run]) -> None:
    """Per engine: the median and range across runs of each figure (a Markdown table)."""
    print("\nper engine, across runs: median [min–max]\n")
    print(
        "| engine | acked obs/s | consumed obs/s | flat-out lag p50 / p99 (s) "
        "| steady lag p50 / p99 (s) |\n| --- | --- | --- | --- | --- |"
    )
    for engine in ENGINES:
        mine = [r for r in runs if r.engine == engine]
        if not mine:
            continue
        cells = [
            _cell([r.acked_per_s for r in mine], "{:,.0f}"),
            _cell([r.consumed_per_s for r in mine], "{:,.0f}"),
            f"{_cell([r.p50 for r in mine], '{:.2f}')} / {_cell([r.p99 for r in mine], '{:.2f}')}",
            f"{_cell([r.steady_p50 for r in mine], '{:.2f}')} / "
            f"{_cell([r.steady_p99 for r in mine], '{:.2f}')}",
        ]
        print(f"| {engine} | {' | '.join(cells)} |")


def _line(r: Run) -> str:
    scored = f"{r.scored:,}/{r.acked:,}"
    return (
        f"{r.engine:9}{r.round + 1:>5}{r.acked_per_s:>13,.0f}{r.calls_per_s:>9,.0f}"
        f"{r.consumed_per_s:>16,.0f}{scored:>16}{_fmt_s(r.p50):>9}{_fmt_s(r.p99):>9}"
        f"{_fmt_s(r.steady_p50):>9}{_fmt_s(r.steady_p99):>9}{r.load:>6.2f}"
        + ("" if r.drained else "  not drained")
    )


@contextmanager
def _timed(what: str) -> Iterator[None]:
    started = time.monotonic()
    yield
    print(f"{what} in {time.monotonic() - started:.1f} s", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds, each running every engine")
    parser.add_argument("--seconds", type=float, default=5.0, help="load per run")
    parser.add_argument("--callers", type=int, default=8, help="concurrent Observe calls")
    parser.add_argument("--batch", type=int, default=100, help="observations per call")
    parser.add_argument("--observations", type=int, default=300_000, help="data made once")
    parser.add_argument("--drain", type=float, default=60.0, help="most seconds to drain")
    parser.add_argument("--rate", type=float, default=2000.0, help="steady observations/s")
    parser.add_argument("--steady", type=float, default=5.0, help="seconds at --rate")
    parser.add_argument("--engines", nargs="+", choices=ENGINES, default=list(ENGINES))
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    with _timed(f"{args.observations:,} observations made"):
        data = make_data(args.observations, args.batch, args.seed)
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    runs: list[Run] = []
    header = (
        f"{'':62}{'flat-out lag':>18}{'steady lag':>18}\n"
        f"{'engine':9}{'round':>5}{'acked obs/s':>13}{'calls/s':>9}{'consumed obs/s':>16}"
        f"{'scored':>16}{'p50 s':>9}{'p99 s':>9}{'p50 s':>9}{'p99 s':>9}{'load':>6}"
    )
    with ExitStack() as stack:
        engines = Engines(stack)
        print(header, flush=True)
        for rnd in range(args.runs):
            turn = rnd % len(args.engines)
            order = args.engines[turn:] + args.engines[:turn]
            for engine in order:
                runs.append(run_engine(engine, rnd, engines.env(engine, rnd), data, args))
                print(_line(runs[-1]), flush=True)
    report(runs)


if __name__ == "__main__":
    main()
