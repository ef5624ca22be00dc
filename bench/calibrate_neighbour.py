"""Calibrate and Agreement over a big recorded run, and what a neighbour sees meanwhile.

Run: `PYTHONPATH=service:clients/python/src .venv/bin/python bench/calibrate_neighbour.py
--cases 20000 --thresholds 1000`. Loopback only; bounded by `--cases` and `--deadline`.

Three processes besides this one's stand-in judge (tests/fakes, on a thread here):

- the server: the same `serve` as `scorewire serve` (its own state directory, SQLite label
  and run stores, the server's defaults), plus a loop-lag probe on its event loop
  (`tests/support/loop_lag.py`): a task that sleeps 1 ms over and over and records how
  late each wake-up was, and how much CPU the loop's thread spent in between (the
  longest hold that was work on the loop, whatever else the machine is doing);
- the neighbour: tiny ListLabels (one sample's labels) and tiny Score calls, each at `--rate`
  per second (open loop) from its own process, latencies recorded with send times;
- this process: sets up the scenario (one RunSuite with `record` of `--cases` cases, each
  a sample of its own whose output is one of `--distinct` texts, so `--distinct` judge
  calls and cached verdicts for the rest; labels for every case through PutLabels, 1,000
  per call, 80% agreeing with the judge), then after a quiet window sends Calibrate (with
  `--thresholds` thresholds evenly spread over 0..1) and Agreement (`--resamples`) over
  the run, one after another.

Printed per window (quiet, Calibrate, Agreement): the call's time, the probe's worst
lateness and the most loop-thread CPU between two wake-ups (each with the count over
10 ms), and the neighbour's p50/p99/max per kind.
Nothing is enforced: the numbers are for reading (goal: no wake-up later than 10 ms).
The figures each call answered are printed too, so that two trees can be compared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
THIS_FILE = str(Path(__file__).resolve())
sys.path[:0] = [str(ROOT / "clients/python/src"), str(ROOT)]

import grpc  # noqa: E402
from scorewire.v1 import labels_pb2 as lpb  # noqa: E402
from scorewire.v1 import labels_pb2_grpc as lpb_grpc  # noqa: E402
from scorewire.v1 import scoring_pb2 as pb  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

OPTIONS = [
    ("grpc.max_receive_message_length", 64 << 20),
    ("grpc.max_send_message_length", 64 << 20),
]
KEY = "sk-bench-calibrate"
LEVELS = 5
LABELS_PER_PUT = 1000


# --- the server, with a loop-lag probe (its own process) -------------------------------------


async def serve_with_probe() -> None:
    """`scorewire serve` as configured by the environment, plus the probe; stdin lines
    `read` print (and reset) the probe's figures as one JSON line."""
    from scorewire.server.app import serve
    from scorewire.settings import Settings

    from tests.support.loop_lag import LoopLagProbe

    probe = LoopLagProbe()
    loop = asyncio.get_running_loop()
    tasks = [asyncio.create_task(probe.run())]
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)

    async def commands() -> None:
        while line := await reader.readline():
            if line.strip() == b"read":
                print(json.dumps(probe.read().as_dict()), flush=True)

    tasks.append(asyncio.create_task(commands()))
    await serve(Settings())
    for t in tasks:
        t.cancel()


class ServerProcess:
    """The server child: its address, and its probe read over stdin/stdout."""

    def __init__(self, judge_url: str, state_dir: str) -> None:
        env = dict(os.environ)
        env.update(
            SCOREWIRE_PORT="0",
            SCOREWIRE_STATE_DIR=state_dir,
            SCOREWIRE_METRICS_ENABLED="false",
            SCOREWIRE_LOG_LEVEL="ERROR",
            SCOREWIRE_OPENAI_BASE_URL=judge_url,
            SCOREWIRE_OPENAI_API_KEY=KEY,
            SCOREWIRE_JUDGE_MODEL="openai:gpt-4o-mini",
        )
        self.proc = subprocess.Popen(
            [sys.executable, THIS_FILE, "--serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if "listening on" not in line:
            self.proc.kill()
            raise RuntimeError(f"the server did not start: {line!r}")
        self.address = line.rsplit(" ", 1)[1].strip()

    def probe(self) -> dict[str, Any]:
        """The probe's figures since the last read."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write("read\n")
        self.proc.stdin.flush()
        return dict(json.loads(self.proc.stdout.readline()))

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)


# --- the neighbour (its own process) ---------------------------------------------------------


def tiny_score() -> pb.ScoreRequest:
    """A small Score: one deterministic check on a short answer."""
    return pb.ScoreRequest(compact=["contains:refund"], output=pb.Output(text="a refund, sent"))


async def neighbour(address: str, rate: float) -> dict[str, Any]:
    """ListLabels and Score, each at `rate`/s, until a line arrives on stdin."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    stop = asyncio.ensure_future(reader.readline())
    seen: dict[str, list[tuple[float, float]]] = {"ListLabels": [], "Score": []}
    errors: Counter[str] = Counter()
    pending: set[asyncio.Task[None]] = set()

    async def one(kind: str, call: Any) -> None:
        sent, t0 = time.time(), time.perf_counter()
        try:
            await call
        except grpc.aio.AioRpcError as err:
            errors[f"{kind} {err.code().name}"] += 1
            return
        seen[kind].append((sent, time.perf_counter() - t0))

    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        labels, scoring = lpb_grpc.LabelServiceStub(ch), pb_grpc.ScoringServiceStub(ch)
        listing, score = lpb.ListLabelsRequest(sample_id="s0", page_size=10), tiny_score()
        for _ in range(20):  # connect, and every scoring worker compiles the plan
            await asyncio.gather(labels.ListLabels(listing), scoring.Score(score, timeout=30))
        print("ready", flush=True)
        interval, next_at = 1.0 / rate, time.monotonic()
        while not stop.done():
            for kind, call in (
                ("ListLabels", labels.ListLabels(listing, timeout=60)),
                ("Score", scoring.Score(score, timeout=60)),
            ):
                task = asyncio.create_task(one(kind, call))
                pending.add(task)
                task.add_done_callback(pending.discard)
            next_at += interval
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if pending:
            await asyncio.gather(*pending)
    return {"seen": seen, "errors": dict(errors)}


# --- the scenario -----------------------------------------------------------------------------


def _level(text: str) -> int:
    return 1 + int(text.rsplit(" ", 1)[1]) % LEVELS


def judge_reply(body: Any) -> Any:
    """The stand-in judge: level 1..5 by the output's number."""
    from tests.fakes.base import Reply

    user = body["messages"][-1]["content"]
    text = user.split("<output>\n", 1)[1].split("\n", 1)[0]
    return Reply(content=json.dumps({"reasoning": "judged", "score": _level(text)}))


def output_of(i: int, distinct: int) -> str:
    return f"answer number {i % distinct}"


async def set_up(address: str, cases: int, distinct: int) -> str:
    """Record the run and label every case; returns the run id."""
    import hashlib

    req = pb.RunSuiteRequest(record=True, run_name="calibrate-bench")
    req.checks.add(name="polite", type="judge").params.update({"rubric": "Is it good?"})
    for i in range(cases):
        c = req.cases.add()
        c.sample.id = f"s{i}"
        c.output.text = output_of(i, distinct)
    rng = random.Random(7)
    async with grpc.aio.insecure_channel(address, options=OPTIONS) as ch:
        scoring, labels = pb_grpc.ScoringServiceStub(ch), lpb_grpc.LabelServiceStub(ch)
        t0 = time.perf_counter()
        run_id = ""
        async for ev in scoring.RunSuite(req, timeout=600):
            if ev.WhichOneof("event") == "summary":
                run_id = ev.summary.run_id
        print(f"  recorded {cases:,} cases in {time.perf_counter() - t0:.1f} s: {run_id}")
        t0 = time.perf_counter()
        for start in range(0, cases, LABELS_PER_PUT):
            put = lpb.PutLabelsRequest()
            for i in range(start, min(cases, start + LABELS_PER_PUT)):
                text = output_of(i, distinct)
                judge_pass = _level(text) >= 4
                put.labels.add(
                    sample_id=f"s{i}",
                    output_hash=hashlib.sha256(text.encode()).hexdigest(),
                    passed=judge_pass if rng.random() < 0.8 else not judge_pass,
                    labeller="ana",
                )
            await labels.PutLabels(put, timeout=60)
        print(f"  labelled them in {time.perf_counter() - t0:.1f} s")
    return run_id


async def big_calls(
    server: ServerProcess, run_id: str, args: argparse.Namespace
) -> list[dict[str, Any]]:
    """The quiet window, then Calibrate and Agreement: each window's figures."""
    thresholds = [i / max(1, args.thresholds - 1) for i in range(args.thresholds)]
    windows = []
    async with grpc.aio.insecure_channel(server.address, options=OPTIONS) as ch:
        labels = lpb_grpc.LabelServiceStub(ch)
        calls = [
            (
                "Calibrate",
                lambda: labels.Calibrate(
                    lpb.CalibrateRequest(
                        agreement=lpb.AgreementRequest(run_id=run_id), thresholds=thresholds
                    ),
                    timeout=args.deadline,
                ),
            ),
            (
                "Agreement",
                lambda: labels.Agreement(
                    lpb.AgreementRequest(
                        run_id=run_id, options=lpb.AgreementOptions(resamples=args.resamples)
                    ),
                    timeout=args.deadline,
                ),
            ),
        ]
        server.probe()
        start = time.time()
        await asyncio.sleep(args.quiet_s)
        windows.append({"name": "quiet", "start": start, "end": time.time(), "answer": "-"})
        windows[-1]["probe"] = server.probe()
        for _ in range(args.repeat):
            for name, call in calls:
                start = time.time()
                try:
                    answer = describe(await call())
                except grpc.aio.AioRpcError as err:
                    answer = f"{err.code().name}: {err.details()}"
                windows.append({"name": name, "start": start, "end": time.time()})
                windows[-1].update(answer=answer, probe=server.probe())
                await asyncio.sleep(1.0)
    return windows


def describe(resp: Any) -> str:
    """The figures an answer carries, short enough for one line."""
    [check] = resp.checks
    if isinstance(resp, lpb.CalibrateResponse):
        kappa = check.recommended_kappa if check.HasField("recommended_kappa") else None
        return (
            f"{check.pairs} pairs, {len(check.points)} points, best threshold "
            f"{check.recommended_threshold:.4f} kappa {kappa}"
        )
    return (
        f"{check.pairs} pairs, kappa {check.kappa:.6f} [{check.kappa_low:.4f}, "
        f"{check.kappa_high:.4f}], accuracy {check.accuracy:.6f}, "
        f"{len(check.disagreements)} disagreements listed"
    )


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def report(windows: list[dict[str, Any]], seen: dict[str, list[list[float]]]) -> None:
    for w in windows:
        p = w["probe"]
        print(
            f"{w['name']:<10} {w['end'] - w['start']:7.2f} s  {w['answer']}\n"
            f"           loop: worst wake-up {p['max_late_ms']:.1f} ms late (p99"
            f" {p['p99_late_ms']:.1f}, {p['late_over_10ms']} of {p['wakeups']} over 10 ms);"
            f" most loop CPU between wake-ups {p['max_cpu_ms']:.1f} ms"
            f" ({p['cpu_over_10ms']} over 10 ms)"
        )
        for kind, rows in seen.items():
            lat = [x * 1000 for t, x in rows if w["start"] <= t <= w["end"]]
            print(
                f"           {kind:<10} p50 {_pct(lat, 0.5):7.1f} ms  p99 {_pct(lat, 0.99):7.1f} ms"
                f"  max {max(lat, default=float('nan')):7.1f} ms  ({len(lat)} calls)"
            )


async def main_async(args: argparse.Namespace) -> None:
    from tests.fakes.openai_server import FakeOpenAI

    fake = FakeOpenAI(api_key=KEY)
    fake.responder = judge_reply
    with fake.running(), tempfile.TemporaryDirectory(prefix="scorewire-calibrate-") as state:
        server = ServerProcess(fake.url, state)
        try:
            run_id = await set_up(server.address, args.cases, args.distinct)
            print(f"  judge calls: {fake.calls}")
            nb = await asyncio.create_subprocess_exec(
                sys.executable,
                THIS_FILE,
                "--neighbour",
                server.address,
                str(args.rate),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
            )
            assert nb.stdout is not None
            await nb.stdout.readline()  # ready
            await asyncio.sleep(1.0)
            windows = await big_calls(server, run_id, args)
            out, _ = await nb.communicate(b"stop\n")
            result = json.loads(out)
        finally:
            server.stop()
    report(windows, result["seen"])
    if result["errors"]:
        print(f"neighbour errors: {result['errors']}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", type=int, default=20_000, help="recorded cases (20,000)")
    parser.add_argument("--thresholds", type=int, default=1000, help="Calibrate's (1,000)")
    parser.add_argument("--distinct", type=int, default=5, help="distinct outputs (5)")
    parser.add_argument("--resamples", type=int, default=1000, help="Agreement's (1,000)")
    parser.add_argument("--rate", type=float, default=50.0, help="neighbour calls/s per kind")
    parser.add_argument("--quiet-s", type=float, default=3.0, help="baseline window, s (3)")
    parser.add_argument("--repeat", type=int, default=1, help="Calibrate+Agreement rounds (1)")
    parser.add_argument("--deadline", type=float, default=300.0, help="per big call, s (300)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--neighbour", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve_with_probe())
        return 0
    if args.neighbour:
        address, rate = args.neighbour
        print(json.dumps(asyncio.run(neighbour(address, float(rate)))))
        return 0
    print(
        f"calibrate neighbour: {args.cases:,} cases ({args.distinct} distinct outputs), "
        f"{args.thresholds:,} thresholds, {args.resamples} resamples, "
        f"neighbour {args.rate:g}/s ListLabels + {args.rate:g}/s Score"
    )
    asyncio.run(main_async(args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
