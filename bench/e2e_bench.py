"""Issue 20's ratios in one command, each measured side by side in alternating rounds.

    .venv/bin/python bench/e2e_bench.py [--rounds 3] [--json out.json] [--only suite,engine]

(`make bench-e2e`; `bench/readme_table.py out.json` writes the table of docs/benchmarks.md.)

Sections, each printing its per-round figures, the median ratio and its range:
- `engine`: scorewire's engine in process on the peers' dataset through its public API
  (`scorewire.api.run_batch`, from the plain dicts inside the timed region to every result
  kept and the summary), against the fastest peer library in process
  (checkllm; it runs in its own environment `--peer-python`, see `peer_bench.py`), on
  each dataset shape of `--shapes` (`peer_dataset.SHAPES`: the default mix, the
  JSON-heavy one where the ratio once fell to ~2.6×, and prose written with typographic
  quotes and dashes), the peer and the engine side by side for each shape in every
  round. Each runs in a process of its own per round, made for it (`--engine-round` is
  the engine's): the same dataset built before the clock and nothing else held, so a
  full collection of the cyclic garbage collector, which walks every object a process
  holds, costs each what its own work and data make it cost (run in this process, the
  engine met one ~100 ms collection in every other round, paying for the datasets and
  RunSuite results this bench holds). Each ratio also in CPU time (each process's own,
  over the same timed region), which the machine's other load moves less;
- `suite`: RunSuite end to end through `scorewire.client`: from the plain dicts to the
  last result and the summary, against a server started with its defaults (metrics on);
  the same peer round beside it, and the same cases sent as one RunSuite request (the
  client streams a batch this big as a RunSuiteStream); `go`: the same through the Go
  client (bench/go_suite), once with Values and once with the JSON-text fields; `java`:
  the same through the Java client (bench/java_suite, built with Maven from its cache;
  each JVM first runs the same RunSuite three times untimed, so its JIT has compiled the
  path as in a long-running Java caller);
- `score`: unary Score with three deterministic checks, metrics on, against the echo
  service with the same message types: from a grpc.aio client at 32 in flight, and the
  Python client's sync `score()` from 32 threads against the same client calling echo;
- `judge`: 1,000 judge checks at concurrency 32 against the stand-in judge (50 ms, its
  own process) against the ideal time: RunSuite from plain dicts through
  `scorewire.client` to a server with its defaults, with the verdict cache in process
  and on Redis (a server each); the engine in process beside them; and the floor, bare
  aiohttp posts of a judge request to the same stand-in (what the stand-in and this
  machine allow at best).

Servers listen on 127.0.0.1 on free ports and are stopped at the end; every loop is
bounded in count and time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients/python/src"), str(ROOT / "bench")]

from peer_dataset import SHAPES, make_records, scorewire_checks  # noqa: E402

PEER = "checkllm 5.1.0"
COMMAND = ".venv/bin/python bench/e2e_bench.py"
Figures = dict[str, Any]


def spread(ratios: list[float]) -> dict[str, float]:
    """Median and range of per-round ratios."""
    r = sorted(ratios)
    return {"median": statistics.median(r), "min": r[0], "max": r[-1]}


def show(label: str, ratios: list[float], target: str, unit: str = "×") -> dict[str, float]:
    s = spread(ratios)
    fmt = (lambda x: f"{x:.0%}") if unit == "%" else (lambda x: f"{x:.2f}×")
    print(
        f"  {label}: {fmt(s['median'])} median of {len(ratios)} rounds "
        f"(range {fmt(s['min'])}..{fmt(s['max'])}; target {target})",
        flush=True,
    )
    return s


# ---- the peer ------------------------------------------------------------------------


class Rate(NamedTuple):
    """Checks per second of wall time, and per second of the process's CPU time."""

    wall: float
    cpu: float


def peer_round(peer_python: str, samples: int, shape: str = "ours") -> Rate:
    """The peer's checks/s in one round, in its own process and environment."""
    out = subprocess.run(
        [
            peer_python,
            str(ROOT / "bench/peer_bench.py"),
            *("--samples", str(samples), "--peer", PEER, "--shape", shape),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    checks = float(row["checks"])
    return Rate(checks / float(row["seconds"]), checks / float(row["cpu_seconds"]))


# ---- engine in process ---------------------------------------------------------------


def engine_process_round(samples: int, shape: str) -> Rate:
    """`engine_round` in a process of its own, as the peer's round runs (see the module
    docstring): checks/s."""
    out = subprocess.run(
        [sys.executable, __file__, "--engine-round", shape, "--samples", str(samples)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    ).stdout
    return Rate(**json.loads(out.strip().splitlines()[-1]))


def engine_round(records: list[dict[str, Any]]) -> Rate:
    """scorewire's engine through its public API, `scorewire.api.run_batch`: from the plain
    dicts (the same case mappings the client round sends) to every result, kept in a
    list as the peer keeps its results, and the summary; checks/s."""
    from scorewire.api import compile_plan, run_batch

    plan = compile_plan(scorewire_checks())
    t0, c0 = time.perf_counter(), time.process_time()
    cases = [
        {
            "sample": {"id": r["id"], "input": r["input"], "expected": r["expected"]},
            "output": r["output"],
        }
        for r in records
    ]
    results, s = run_batch(cases, plan)
    elapsed, cpu = time.perf_counter() - t0, time.process_time() - c0
    scores = s.passed + s.failed + s.errored
    assert scores == len(records) * 5 and len(results) == len(records), scores
    return Rate(scores / elapsed, scores / cpu)


# ---- servers -------------------------------------------------------------------------


def start(cmd: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"{cmd[0]} did not start: {line!r}")
    return proc, line.rsplit(" ", 1)[1].strip()


def server_env(state: str, **extra: str) -> dict[str, str]:
    """The server's defaults (metrics on), on free ports, with its own state directory."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREWIRE_")}
    env.update(
        SCOREWIRE_METRICS_PORT="0",
        SCOREWIRE_STATE_DIR=state,
        PYTHONPATH=f"{ROOT / 'service'}:{ROOT / 'clients/python/src'}",
    )
    env.update(extra)
    return env


def start_server(state: str, **extra: str) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "scorewire.cli.main", "serve", "--port", "0"]
    return start(cmd, server_env(state, **extra))


def stop(*procs: subprocess.Popen[str]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(15)
        except subprocess.TimeoutExpired:
            p.kill()


# ---- RunSuite through the Python client ----------------------------------------------


def suite_round(addr: str, records: list[dict[str, Any]], one_request: bool = False) -> float:
    """RunSuite from plain dicts through `scorewire.client`, to the summary: checks/s.

    `client.run_suite` streams a batch this big (RunSuiteStream, 500 cases a chunk);
    `one_request` sends the same cases as one RunSuite instead, built by the client's own
    conversion (the path it takes for 500 cases or fewer): the baseline of the stream."""
    from scorewire.client import Client, SuiteRun, _convert

    checks = scorewire_checks()
    with Client(addr, timeout=300) as client:
        t0 = time.perf_counter()
        cases = [
            {
                "sample": {"id": r["id"], "input": r["input"], "expected": r["expected"]},
                "output": r["output"],
            }
            for r in records
        ]
        if one_request:
            req = _convert.run_suite_request(
                cases=cases, suite_yaml="", suite_name="", checks=checks, compact=None,
                gate=None, budget_usd=None,
            )  # fmt: skip
            run = SuiteRun(client._stub.RunSuite(req, timeout=300))
        else:
            run = client.run_suite(cases, checks=checks)
        n = scores = 0
        for result in run:
            n += 1
            scores += len(result.scores)
        summary = run.summary
        elapsed = time.perf_counter() - t0
    assert n == len(records) and summary.cases == n, (n, summary.cases)
    return scores / elapsed


# ---- RunSuite through the Go client --------------------------------------------------


def build_go(out: str) -> str | None:
    """The Go client's bench binary (bench/go_suite), or None without a Go toolchain."""
    if shutil.which("go") is None:
        return None
    subprocess.run(
        ["go", "build", "-o", out, "."],
        cwd=ROOT / "bench/go_suite",
        check=True,
        env={**os.environ, "GOFLAGS": "-mod=mod"},
        timeout=600,
    )
    return out


def go_round(binary: str, addr: str, records_file: str, checks_file: str, as_json: bool) -> float:
    """RunSuite through the Go client from decoded records to the summary: checks/s."""
    cmd = [binary, "-addr", addr, "-records", records_file, "-checks", checks_file]
    out = subprocess.run(
        [*cmd, *(["-json"] if as_json else [])],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return float(row["checks"]) / float(row["seconds"])


# ---- RunSuite through the Java client ------------------------------------------------

JAVA_WARMUP_RUNS = 3
"""Untimed RunSuites of the same cases each JVM runs first, so C2 has compiled the path:
after a single run of 2,000 cases the timed run still spent about three times the client
CPU (0.8-1.8 s against 0.3-0.5 s), mostly compiling."""


def build_java() -> list[str] | None:
    """The command running bench/java_suite, or None without `mvn` and `java`."""
    if shutil.which("mvn") is None or shutil.which("java") is None:
        return None
    module = ROOT / "bench/java_suite"
    built = subprocess.run(
        ["mvn", "-B", "-ntp", "-q", "-Dstyle.color=never", "compile"],
        cwd=module,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if built.returncode != 0:
        raise SystemExit(f"bench/java_suite did not build:\n{built.stdout}{built.stderr}")
    classpath = (module / "target/classpath.txt").read_text().strip()
    return [
        "java",
        "-cp",
        f"{module / 'target/classes'}:{classpath}",
        "dev.scorewire.bench.JavaSuite",
    ]


def java_round(
    cmd: list[str],
    addr: str,
    records_file: str,
    checks_file: str,
    as_json: bool,
    warmup_runs: int = JAVA_WARMUP_RUNS,
) -> float:
    """RunSuite through the Java client from parsed records to the summary: checks/s."""
    args = ["-addr", addr, "-records", records_file, "-checks", checks_file]
    args += ["-warmup-runs", str(warmup_runs), *(["-json"] if as_json else [])]
    out = subprocess.run(
        [*cmd, *args], check=True, capture_output=True, text=True, timeout=600
    ).stdout
    row = json.loads(out.strip().splitlines()[-1])
    return float(row["checks"]) / float(row["seconds"])


# ---- unary Score against echo --------------------------------------------------------

SCORE_CHECKS = [
    {"type": "contains", "params": {"needles": ["refund"]}},
    {"type": "regex", "params": {"pattern": "^OK: [0-9]{1,3}"}},
    {"type": "length", "params": {"max_chars": 500}},
]
SCORE_OUTPUT = "OK: 200 — the refund was issued to the original card."
SCORE_SAMPLE = {"id": "s1", "expected": "refund"}


def aio_rate(addr: str, echo: str, seconds: float, concurrency: int) -> tuple[float, float]:
    """Score and echo req/s from a grpc.aio client, one after the other."""
    import grpc
    from scorewire.client import _convert
    from scorewire.v1 import scoring_pb2 as pb
    from scorewire.v1 import scoring_pb2_grpc as pb_grpc

    req = _convert.score_request(
        output=SCORE_OUTPUT, sample=SCORE_SAMPLE, checks=SCORE_CHECKS, compact=None, budget_usd=None
    )

    async def load(call: Callable[[Any], Any]) -> float:
        stop_at = time.perf_counter() + seconds
        count = 0

        async def worker() -> None:
            nonlocal count
            while time.perf_counter() < stop_at:
                await call(req)
                count += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(concurrency)))
        return count / (time.perf_counter() - t0)

    async def run() -> tuple[float, float]:
        async with (
            grpc.aio.insecure_channel(addr) as ch,
            grpc.aio.insecure_channel(echo) as ech,
        ):
            stub = pb_grpc.ScoringServiceStub(ch)
            echo_call = ech.unary_unary(
                "/Echo/Unary",
                request_serializer=pb.ScoreRequest.SerializeToString,
                response_deserializer=pb.ScoreRequest.FromString,
            )
            for _ in range(50):  # warm up: the plan cache, inline scoring, connections
                await stub.Score(req)
                await echo_call(req)
            return await load(stub.Score), await load(echo_call)

    return asyncio.run(run())


def thread_rate(addr: str, echo: str, seconds: float, threads: int) -> tuple[float, float]:
    """`Client.score()` req/s from threads, and the same client's channel calling echo."""
    import grpc
    from scorewire.client import Client, _convert
    from scorewire.v1 import scoring_pb2 as pb

    with Client(addr) as client, grpc.insecure_channel(echo) as ech:
        echo_call = ech.unary_unary(
            "/Echo/Unary",
            request_serializer=pb.ScoreRequest.SerializeToString,
            response_deserializer=pb.ScoreRequest.FromString,
        )

        def via_client() -> None:
            client.score(SCORE_OUTPUT, sample=SCORE_SAMPLE, checks=SCORE_CHECKS)

        def via_echo() -> None:
            # What the client does per call, minus the service: build the request
            # from the same dicts, send it, read the answer.
            req = _convert.score_request(
                output=SCORE_OUTPUT,
                sample=SCORE_SAMPLE,
                checks=SCORE_CHECKS,
                compact=None,
                budget_usd=None,
            )
            echo_call(req, timeout=30)

        def load(fn: Callable[[], None]) -> float:
            stop_at = time.perf_counter() + seconds
            counts = [0] * threads

            def worker(i: int) -> None:
                while time.perf_counter() < stop_at:
                    fn()
                    counts[i] += 1

            ts = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
            t0 = time.perf_counter()
            for t in ts:
                t.start()
            for t in ts:
                t.join()
            return sum(counts) / (time.perf_counter() - t0)

        for _ in range(50):
            via_client()
            via_echo()
        return load(via_client), load(via_echo)


# ---- judge-bound ---------------------------------------------------------------------


def judge_round(judge_url: str, redis_url: str | None, n: int, concurrency: int) -> float:
    """Elapsed / ideal for `n` judge checks on distinct outputs (50 ms judge)."""
    from scorewire.core.context import CheckContext
    from scorewire.core.model import Output, Sample
    from scorewire.engine.runner import Case, Plan, run_cases
    from scorewire.engine.spec import CheckSpec, compile_check
    from scorewire.judge import Budget, JudgeService
    from scorewire.settings import Settings

    extra: dict[str, Any] = {}
    if redis_url is not None:
        extra = {"cache_url": redis_url}
    settings = Settings(
        openai_api_key="bench-key",
        openai_base_url=f"{judge_url}/v1",
        judge_model="openai:gpt-4o-mini",
        judge_concurrency=concurrency,
        **extra,
    )
    tag = f"{time.time_ns()}"

    async def run() -> float:
        svc = JudgeService.from_settings(settings)
        plan = Plan([compile_check(CheckSpec("judge", {"rubric": "Is it polite?"}), "checks[0]")])
        ctx = CheckContext(judge=svc, budget=Budget(None))

        async def score(outputs: list[str]) -> None:
            cases = [
                Case(Sample(id=str(i), input="Say hello."), Output(t), i)
                for i, t in enumerate(outputs)
            ]
            async for result in run_cases(plan, cases, ctx, concurrency=concurrency):
                for s in result.scores:
                    if s.error is not None:
                        raise SystemExit(f"a judge check errored: {s.error}")

        # Connections open as on a long-running server; then distinct outputs.
        await score([f"warm-up {tag} {i}" for i in range(concurrency)])
        t0 = time.perf_counter()
        await score([f"Hello {tag} number {i}, nice to meet you." for i in range(n)])
        elapsed = time.perf_counter() - t0
        await svc.aclose()
        return elapsed / (n / concurrency * 0.050)

    return asyncio.run(run())


JUDGE_CHECKS = [{"type": "judge", "rubric": "Is it polite?"}]


def judge_wire_round(addr: str, n: int, concurrency: int) -> float:
    """Elapsed / ideal for `n` judge checks through a server and `scorewire.client`.

    As a caller meets it: plain dicts in, RunSuite with the server's defaults (metrics
    on, suite concurrency 32), to the last result and the summary; distinct outputs,
    so every check is a judge call."""
    from scorewire.client import Client

    tag = f"{time.time_ns()}"
    with Client(addr, timeout=300) as client:

        def score(outputs: list[str]) -> None:
            cases = [
                {"sample": {"id": str(i), "input": "Say hello."}, "output": t}
                for i, t in enumerate(outputs)
            ]
            run = client.run_suite(cases, checks=JUDGE_CHECKS)
            for result in run:
                for s in result.scores:
                    if s.HasField("error"):
                        raise SystemExit(f"a judge check errored: {s.error.message}")
            assert run.summary.cases == len(cases)

        score([f"warm-up {tag} {i}" for i in range(concurrency)])  # the channel is open
        t0 = time.perf_counter()
        score([f"Hello {tag} number {i}, nice to meet you." for i in range(n)])
        elapsed = time.perf_counter() - t0
    return elapsed / (n / concurrency * 0.050)


def judge_floor_round(judge_url: str, n: int, concurrency: int) -> float:
    """Elapsed / ideal for `n` bare HTTP posts of a judge request to the same stand-in.

    aiohttp (the judge backends' transport) with nothing around it, `concurrency`
    lanes: what the stand-in and this machine allow at best, the floor of the judge
    rows (the stand-in's own request handling and timer are in it)."""
    import aiohttp

    body = json.dumps(
        {
            "model": "gpt-4o-mini",
            "messages": [{"role": "user", "content": "Say hello."}],
            "max_tokens": 512,
        }
    ).encode()
    headers = {"authorization": "Bearer bench-key", "content-type": "application/json"}

    async def run() -> float:
        async with aiohttp.ClientSession() as session:

            async def post() -> None:
                url = f"{judge_url}/v1/chat/completions"
                async with session.post(url, data=body, headers=headers) as resp:
                    await resp.read()
                    assert resp.status == 200, resp.status

            todo = iter(range(n))

            async def lane() -> None:
                for _ in todo:
                    await post()

            await asyncio.gather(*(post() for _ in range(concurrency)))  # connections open
            t0 = time.perf_counter()
            await asyncio.gather(*(lane() for _ in range(concurrency)))
            return time.perf_counter() - t0

    return asyncio.run(run()) / (n / concurrency * 0.050)


def start_judge() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fakes.openai_server", "--latency-ms", "50"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        proc.kill()
        raise SystemExit("the stand-in judge did not start")
    return proc, f"http://127.0.0.1:{line[1]}"


def start_redis(state: str) -> tuple[subprocess.Popen[str], str]:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--dir", state],
        stdout=subprocess.DEVNULL,
        text=True,
    )
    import redis

    r = redis.Redis(port=port)
    for _ in range(100):
        try:
            r.ping()
            break
        except redis.ConnectionError:
            time.sleep(0.05)
    return proc, f"redis://127.0.0.1:{port}/0"


# ---- main ----------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--seconds", type=float, default=2.0, help="per Score round and side")
    parser.add_argument("--peer-python", default=str(ROOT / ".tmp/peers/bin/python"))
    parser.add_argument("--only", default="engine,suite,go,java,score,judge")
    parser.add_argument("--engine-round", metavar="SHAPE", help=argparse.SUPPRESS)
    parser.add_argument(
        "--shapes",
        default=",".join(SHAPES),
        help=f"the engine section's dataset shapes, comma-separated (of {', '.join(SHAPES)})",
    )
    parser.add_argument("--json", help="write the figures here (for readme_table.py)")
    parser.add_argument(
        "--java-warmup-runs",
        type=int,
        default=JAVA_WARMUP_RUNS,
        help="untimed RunSuites each JVM runs first (0: time a cold JVM)",
    )
    args = parser.parse_args()
    if args.engine_round:  # one engine round in this (fresh) process, for the section
        r = engine_round(make_records(args.samples, shape=SHAPES[args.engine_round]))
        print(json.dumps(r._asdict()), flush=True)
        return
    only = set(args.only.split(","))
    shapes = [s for s in args.shapes.split(",") if s]
    if unknown := set(shapes) - set(SHAPES):
        parser.error(f"--shapes: no such shape {sorted(unknown)} (known: {', '.join(SHAPES)})")
    suites = {"suite", "go", "java"}  # sections that run against one RunSuite server
    if only & {"engine", *suites} and not Path(args.peer_python).exists():
        raise SystemExit(
            f"no peer environment at {args.peer_python}: make it as bench/peer_bench.py says, "
            "or pass --peer-python"
        )
    records = make_records(args.samples)
    figures: Figures = {"command": COMMAND, "rounds": args.rounds, "samples": args.samples}
    if "java" in only:
        figures["java_warmup_runs"] = args.java_warmup_runs
        if args.java_warmup_runs != JAVA_WARMUP_RUNS:
            figures["command"] += f" --java-warmup-runs {args.java_warmup_runs}"
    state = tempfile.mkdtemp(prefix="scorewire-e2e-")
    procs: list[subprocess.Popen[str]] = []
    try:
        if only & {"engine", *suites}:
            server = None
            if only & suites:
                server, addr = start_server(state)
                procs.append(server)
                suite_round(addr, records[:2000])  # warm up: plan, workers, connection
            go = java = None
            records_file, checks_file = Path(state) / "records.json", Path(state) / "checks.json"
            if server is not None and only & {"go", "java"}:
                records_file.write_text(json.dumps(records))
                checks_file.write_text(json.dumps(scorewire_checks()))
            if server is not None and "go" in only:
                go = build_go(str(Path(state) / "go_suite"))
                if go is None:
                    print("go: skipped, no `go` toolchain on PATH", flush=True)
            if server is not None and "java" in only:
                java = build_java()
                if java is None:
                    print("java: skipped, `mvn` or `java` not on PATH", flush=True)
            peer, suite, suite_one, go_value, go_json = [], [], [], [], []
            eng: dict[str, list[tuple[Rate, Rate]]] = {name: [] for name in shapes}
            java_value: list[float] = []
            java_json: list[float] = []
            for i in range(args.rounds):
                ours = peer_round(args.peer_python, args.samples)
                peer.append(ours.wall)
                for name in shapes if "engine" in only else ():
                    # the peer and the engine on each shape, side by side
                    p = ours if name == "ours" else peer_round(args.peer_python, args.samples, name)
                    e = engine_process_round(args.samples, name)
                    eng[name].append((p, e))
                    print(
                        f"round {i + 1}, shape {name}: peer {p.wall:,.0f} checks/s, "
                        f"engine {e.wall:,.0f}: {e.wall / p.wall:.2f}× "
                        f"(CPU time: peer {p.cpu:,.0f}, engine {e.cpu:,.0f}: "
                        f"{e.cpu / p.cpu:.2f}×)",
                        flush=True,
                    )
                if server is not None and "suite" in only:
                    suite.append(suite_round(addr, records))
                    suite_one.append(suite_round(addr, records, one_request=True))
                if go is not None:
                    rf, cf = str(records_file), str(checks_file)
                    go_value.append(go_round(go, addr, rf, cf, as_json=False))
                    go_json.append(go_round(go, addr, rf, cf, as_json=True))
                if java is not None:
                    rf, cf = str(records_file), str(checks_file)
                    w = args.java_warmup_runs
                    java_value.append(java_round(java, addr, rf, cf, False, w))
                    java_json.append(java_round(java, addr, rf, cf, True, w))
                print(
                    f"round {i + 1}: peer {peer[-1]:,.0f} checks/s"
                    + (
                        f", RunSuite via the Python client {suite[-1]:,.0f} "
                        f"(as one request {suite_one[-1]:,.0f})"
                        if suite
                        else ""
                    )
                    + (
                        f", via the Go client {go_value[-1]:,.0f} (Values) "
                        f"{go_json[-1]:,.0f} (JSON fields)"
                        if go_value
                        else ""
                    )
                    + (
                        f", via the Java client {java_value[-1]:,.0f} (Values) "
                        f"{java_json[-1]:,.0f} (JSON fields)"
                        if java_value
                        else ""
                    ),
                    flush=True,
                )
            figures["peer"] = {"name": PEER, "checks_per_s": statistics.median(peer)}
            print(f"{args.samples:,} cases x 5 checks, the peer ({PEER}) in process:")
            for name, runs in eng.items() if "engine" in only else ():
                key = "engine" if name == "ours" else f"engine_{name}"
                figures[key] = {
                    "shape": name,
                    "peer_checks_per_s": statistics.median(p.wall for p, _ in runs),
                    "checks_per_s": statistics.median(e.wall for _, e in runs),
                    **show(
                        f"engine in process / peer, shape {name}",
                        [e.wall / p.wall for p, e in runs],
                        "≥ 4×",
                    ),
                    "cpu": show("  the same in CPU time", [e.cpu / p.cpu for p, e in runs], "≥ 4×"),
                }
            if suite:
                figures["suite"] = {
                    "checks_per_s": statistics.median(suite),
                    **show(
                        "RunSuite through the Python client / peer",
                        [s / p for s, p in zip(suite, peer, strict=False)],
                        "≥ 2.5×",
                    ),
                }
                figures["suite_one_request"] = {
                    "checks_per_s": statistics.median(suite_one),
                    **show(
                        "  the same cases as one RunSuite request / peer",
                        [s / p for s, p in zip(suite_one, peer, strict=False)],
                        "—",
                    ),
                }
                show(
                    "  streamed / one request",
                    [s / o for s, o in zip(suite, suite_one, strict=True)],
                    "—",
                )
            for key, runs, label in (
                ("suite_go", go_value, "RunSuite through the Go client (Values) / peer"),
                ("suite_go_json", go_json, "RunSuite through the Go client (JSON fields) / peer"),
                ("suite_java", java_value, "RunSuite through the Java client (Values) / peer"),
                (
                    "suite_java_json",
                    java_json,
                    "RunSuite through the Java client (JSON fields) / peer",
                ),
            ):
                if runs:
                    figures[key] = {
                        "checks_per_s": statistics.median(runs),
                        **show(label, [g / p for g, p in zip(runs, peer, strict=True)], "—"),
                    }
        if "score" in only:
            server, addr = start_server(state)
            echo, echo_addr = start([sys.executable, str(ROOT / "bench/echo_server.py")])
            procs += [server, echo]
            aio, sync = [], []
            for _ in range(args.rounds):
                s, e = aio_rate(addr, echo_addr, args.seconds, 32)
                aio.append((s, e))
                s, e = thread_rate(addr, echo_addr, args.seconds, 32)
                sync.append((s, e))
                print(
                    f"round: aio Score {aio[-1][0]:,.0f}/s echo {aio[-1][1]:,.0f}/s; "
                    f"client.score() threads {sync[-1][0]:,.0f}/s echo {sync[-1][1]:,.0f}/s",
                    flush=True,
                )
            print("Unary Score, 3 deterministic checks, metrics on, 32 in flight:")
            figures["score_aio"] = {
                "rate": statistics.median(s for s, _ in aio),
                **show("grpc.aio Score / echo", [s / e for s, e in aio], "≥ 85%", "%"),
            }
            figures["score_threads"] = {
                "rate": statistics.median(s for s, _ in sync),
                **show(
                    "client.score() from threads / echo", [s / e for s, e in sync], "≥ 70%", "%"
                ),
            }
        if "judge" in only:
            judge, url = start_judge()
            procs.append(judge)
            judge_env = {
                "SCOREWIRE_OPENAI_API_KEY": "bench-key",
                "SCOREWIRE_OPENAI_BASE_URL": f"{url}/v1",
                "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
            }
            for sub in ("judge", "judge-redis"):
                os.makedirs(os.path.join(state, sub))
            wire_proc, wire_addr = start_server(os.path.join(state, "judge"), **judge_env)
            procs.append(wire_proc)
            redis_addr = None
            if shutil.which("redis-server"):
                redis_proc, redis_url = start_redis(state)
                procs.append(redis_proc)
                on_redis, redis_addr = start_server(
                    os.path.join(state, "judge-redis"), SCOREWIRE_CACHE_URL=redis_url, **judge_env
                )
                procs.append(on_redis)
            wire, cached, engine, floor = [], [], [], []
            for _ in range(args.rounds):
                floor.append(judge_floor_round(url, 1000, 32))
                wire.append(judge_wire_round(wire_addr, 1000, 32))
                if redis_addr is not None:
                    cached.append(judge_wire_round(redis_addr, 1000, 32))
                engine.append(judge_round(url, None, 1000, 32))
                print(
                    f"round: floor {floor[-1]:.3f}, through the server {wire[-1]:.3f}"
                    + (f", on Redis {cached[-1]:.3f}" if cached else "")
                    + f", engine in process {engine[-1]:.3f}",
                    flush=True,
                )
            print(
                "1,000 judge checks at concurrency 32, 50 ms stand-in judge (elapsed / ideal), "
                "RunSuite through scorewire.client, server defaults:"
            )
            figures["judge"] = show("in-process verdict cache", wire, "≤ 1.10×")
            if cached:
                figures["judge_redis"] = show("verdict cache on Redis", cached, "≤ 1.10×")
            figures["judge_engine"] = show("the engine in process, no server", engine, "≤ 1.10×")
            figures["judge_floor"] = show(
                "floor: bare aiohttp posts to the same stand-in", floor, "(baseline)"
            )
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
        stop(*procs)
        shutil.rmtree(state, ignore_errors=True)
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
