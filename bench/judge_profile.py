"""Where the CPU of a judge-bound run goes, per judge call, split by component.

    .venv/bin/python bench/judge_profile.py [--n 1000] [--concurrency 32] [--redis]
        [--no-profile] [--top 25] [--save out.prof] [--service DIR]

Runs the workload of `e2e_bench.py --only judge` (N judge checks on distinct outputs
through the engine runner and the real `openai` SDK, against the stand-in judge in its
own process with 50 ms latency; `--redis` puts the verdict cache on a Redis started
here) and prints:

- the CPU seconds per call of this process (the scoring side), of the stand-in judge
  and of Redis, read from /proc around the timed region, and the elapsed / ideal ratio;
- unless `--no-profile`: the scoring side's CPU per call split by component, from
  cProfile's own time (tottime) per function grouped by the file it lives in
  (asyncio's loop, httpx/httpcore/h11, the openai SDK, redis-py/aiocache, the engine,
  the judge service, ...), and the top functions by own time.

cProfile slows Python code down several times over, so the profiled split is a
proportion, not a time: the unprofiled CPU per call is the absolute figure.

`--service DIR` scores with the `scorewire` package under DIR instead of this tree's
(for A/B rounds against an older commit: `git archive COMMIT service | tar -x -C /tmp/a`,
then alternate `--service /tmp/a/service` with this tree's rounds in one loop).
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
_SERVICE = ROOT / "service"
if "--service" in sys.argv[:-1]:  # before anything imports scorewire
    _SERVICE = Path(sys.argv[sys.argv.index("--service") + 1]).resolve()
sys.path[:0] = [str(_SERVICE), str(ROOT / "clients/python/src"), str(ROOT / "bench")]

from e2e_bench import start_judge, start_redis, stop  # noqa: E402

sys.path.insert(0, str(_SERVICE))  # e2e_bench put this tree's service first again
assert "scorewire" not in sys.modules, "scorewire was imported before --service applied"

# First match wins: (component, substring of the function's file or name).
COMPONENTS: list[tuple[str, str]] = [
    ("scorewire engine", "scorewire/engine/"),
    ("scorewire judge cache", "scorewire/judge/cache.py"),
    ("scorewire judge cache", "scorewire/judge/cache_entry.py"),
    ("scorewire judge cache", "scorewire/judge/memory_store.py"),
    ("scorewire judge cache", "scorewire/judge/redis_store.py"),
    ("scorewire judge budget", "scorewire/judge/budget.py"),
    ("scorewire judge leases/ledger", "scorewire/judge/shared.py"),
    ("scorewire judge stats", "scorewire/judge/stats.py"),
    ("scorewire judge backend", "scorewire/judge/backends/"),
    ("scorewire judge prompts", "scorewire/judge/prompts.py"),
    ("scorewire judge verdict", "scorewire/judge/verdict.py"),
    ("scorewire judge service", "scorewire/judge/"),
    ("scorewire checks", "scorewire/checks/"),
    ("scorewire other", "scorewire/"),
    ("openai SDK", "/openai/"),
    ("httpx", "/httpx"),
    ("httpcore", "/httpcore"),
    ("h11", "/h11/"),
    ("anyio/sniffio", "/anyio/"),
    ("anyio/sniffio", "/sniffio/"),
    ("redis-py", "/redis/"),
    ("aiocache", "/aiocache/"),
    ("aiohttp/yarl/multidict", "/aiohttp/"),
    ("aiohttp/yarl/multidict", "/yarl/"),
    ("aiohttp/yarl/multidict", "/multidict/"),
    ("pydantic", "/pydantic"),
    ("asyncio loop/tasks", "/asyncio/"),
    ("asyncio loop/tasks", "_asyncio"),
    ("asyncio loop/tasks", "selectors.py"),
    ("json", "/json/"),
    ("json", "_json"),
    ("sockets (send/recv)", "of '_socket.socket'"),
    ("sockets (send/recv)", "select.epoll"),
    ("ssl/socket", "/ssl.py"),
    ("ssl/socket", "/socket.py"),
    ("hashlib", "_hashlib"),
    ("typing/abc", "/typing.py"),
    ("typing/abc", "/abc.py"),
    ("typing/abc", "_abc"),
    ("contextlib", "/contextlib.py"),
    ("email/http headers", "/email/"),
    ("urllib/idna", "/urllib/"),
    ("urllib/idna", "/idna/"),
    ("opentelemetry", "/opentelemetry/"),
    ("logging", "/logging/"),
]


def component(func: tuple[str, int, str]) -> str:
    """The component a cProfile function key (file, line, name) belongs to."""
    where = f"{func[0]}:{func[2]}"
    for name, part in COMPONENTS:
        if part in where:
            return name
    return "other builtins/stdlib"


def cpu_of(pid: int) -> float:
    """User + system CPU seconds of process `pid` so far (from /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def workload(judge_url: str, redis_url: str | None, n: int, concurrency: int) -> Any:
    """(svc, warm(), timed()) for `e2e_bench.judge_round`'s workload."""
    import scorewire.checks  # noqa: F401  (registers the check types)
    from scorewire.core.context import CheckContext
    from scorewire.core.model import Output, Sample
    from scorewire.engine.runner import Case, Plan, run_cases
    from scorewire.engine.spec import CheckSpec, compile_check
    from scorewire.judge import Budget, JudgeService
    from scorewire.settings import Settings

    extra: dict[str, Any] = {} if redis_url is None else {"cache_url": redis_url}
    settings = Settings(
        openai_api_key="bench-key",
        openai_base_url=f"{judge_url}/v1",
        judge_model="openai:gpt-4o-mini",
        judge_concurrency=concurrency,
        **extra,
    )
    tag = f"{time.time_ns()}"
    svc = JudgeService.from_settings(settings)
    plan = Plan([compile_check(CheckSpec("judge", {"rubric": "Is it polite?"}), "checks[0]")])
    ctx = CheckContext(judge=svc, budget=Budget(None))

    async def score(outputs: list[str]) -> None:
        cases = [
            Case(Sample(id=str(i), input="Say hello."), Output(t), i) for i, t in enumerate(outputs)
        ]
        async for result in run_cases(plan, cases, ctx, concurrency=concurrency):
            for s in result.scores:
                if s.error is not None:
                    raise SystemExit(f"a judge check errored: {s.error}")

    async def warm() -> None:
        await score([f"warm-up {tag} {i}" for i in range(concurrency)])

    rounds = iter(range(1_000_000))

    async def timed() -> None:
        r = next(rounds)  # distinct outputs every round: every check is a miss
        await score([f"Hello {tag}.{r} number {i}, nice to meet you." for i in range(n)])

    return svc, warm, timed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--redis", action="store_true", help="the verdict cache on Redis")
    parser.add_argument("--no-profile", action="store_true", help="CPU per call only")
    parser.add_argument("--top", type=int, default=25, help="functions listed by own time")
    parser.add_argument("--save", help="write the cProfile stats here (for pstats)")
    parser.add_argument("--service", help="score with the scorewire package under this dir")
    args = parser.parse_args()

    state = tempfile.mkdtemp(prefix="judge-profile-")
    procs: list[Any] = []
    try:
        judge, url = start_judge()
        procs.append(judge)
        redis_url = None
        if args.redis:
            if not shutil.which("redis-server"):
                raise SystemExit("redis-server is not installed")
            redis_proc, redis_url = start_redis(state)
            procs.append(redis_proc)
        svc, warm, timed = workload(url, redis_url, args.n, args.concurrency)
        profiler = None if args.no_profile else cProfile.Profile()

        Measured = tuple[float, float, dict[int, float]]

        async def measure(profile: cProfile.Profile | None) -> Measured:
            others = {p.pid: cpu_of(p.pid) for p in procs}
            cpu0, t0 = time.process_time(), time.perf_counter()
            if profile is not None:
                profile.enable()
            await timed()
            if profile is not None:
                profile.disable()
            elapsed, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            return elapsed, cpu, {pid: cpu_of(pid) - c for pid, c in others.items()}

        async def run() -> Measured:
            await warm()
            plain = await measure(None)
            if profiler is not None:
                await measure(profiler)  # new distinct outputs: misses again
            await svc.aclose()
            return plain

        elapsed, cpu, others = asyncio.run(run())
        ideal = args.n / args.concurrency * 0.050
        import scorewire.judge.service as used

        where = "Redis" if args.redis else "in process"
        print(f"scorewire from {Path(used.__file__).parents[2]}")
        print(f"{args.n} judge checks at concurrency {args.concurrency}, verdict cache {where}:")
        print(f"  elapsed {elapsed:.2f} s, ideal {ideal:.2f} s: {elapsed / ideal:.2f}x")
        print(f"  scoring process CPU: {cpu * 1e3 / args.n:.3f} ms per call")
        names = {judge.pid: "stand-in judge"}
        if len(procs) > 1:
            names[procs[1].pid] = "redis-server"
        for pid, c in others.items():
            print(f"  {names[pid]} CPU: {c * 1e3 / args.n:.3f} ms per call")
        if profiler is None:
            return
        if args.save:
            profiler.dump_stats(args.save)
        stats = pstats.Stats(profiler)
        raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
        split: dict[str, float] = defaultdict(float)
        total = 0.0
        for func, (_cc, _nc, tt, _ct, _callers) in raw.items():
            split[component(func)] += tt
            total += tt
        print(
            "  split of the scoring process's CPU (cProfile own time; share, ms/call "
            "scaled to the unprofiled CPU):"
        )
        for name, tt in sorted(split.items(), key=lambda kv: -kv[1]):
            share = tt / total
            print(f"    {name:32s} {share:6.1%}  {share * cpu * 1e3 / args.n:6.3f} ms")
        print(f"  top {args.top} functions by own time:")
        stats.sort_stats("tottime").print_stats(args.top)
    finally:
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
        stop(*procs)
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    main()
