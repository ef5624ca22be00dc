"""Where unary Score's gap to an echo service lies: the scorewire process or the handler.

    .venv/bin/python bench/unary_overhead.py [--rounds 5] [--calls 6000] [--no-interceptors]

Starts `scorewire serve` with its defaults (metrics on) and with two methods of its own
registered on the same grpc server beside ScoringService: the bare echo of
`bench/echo_server.py`, and a no-op that answers every ScoreRequest with the same
ScoreResponse (the first one Score returned). The bare echo server runs on its own too.
A grpc.aio client with 32 calls in flight then alternates rounds of: the bare echo server,
echo inside the scorewire process (its interceptors, threads and settings, no handler),
the no-op (the same request and response types as Score, no work), and Score with the
e2e bench's three deterministic checks. Each round reads the serving process's CPU time
from /proc (and that of its children: the scoring workers, to show Score stayed inline),
and the server reports the thread CPU spent inside the Score handler itself.

Prints, per path, the median server CPU per call, the median req/s, and the median and
range of its req/s over the bare echo's in the same round; for Score also the handler's
own CPU per call. `--no-interceptors` serves without the gRPC interceptors (metrics and
the decode guard), to tell their share: a diagnosis only, since the ScoringService
metrics then go uncounted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "service"), str(ROOT / "clients/python/src"), str(ROOT / "bench")]

import e2e_bench as E  # noqa: E402
import grpc  # noqa: E402
import grpc.aio  # noqa: E402

CONCURRENCY = 32
TICK = os.sysconf("SC_CLK_TCK")


def _serve_with_echo() -> None:
    """The server side (`--serve`): `scorewire serve --port 0` with the echo and no-op
    methods added, and the Score handler's thread CPU written to the file named by
    UNARY_OVERHEAD_REPORT on every SIGUSR1 (then zeroed)."""
    import signal

    import echo_server
    from scorewire.cli.main import main
    from scorewire.server import scoring_service as service
    from scorewire.v1 import scoring_pb2 as pb

    original = grpc.aio.server
    drop = os.environ.get("UNARY_OVERHEAD_NO_INTERCEPTORS") == "1"
    answer: list[pb.ScoreResponse] = []
    spent = [0, 0.0]  # calls, thread CPU seconds inside Score
    score = service.ScoringService.Score

    async def timed_score(self: Any, request: Any, context: Any) -> Any:
        t0 = time.thread_time()  # inline Score never suspends: this is its own CPU
        response = await score(self, request, context)
        spent[0] += 1
        spent[1] += time.thread_time() - t0
        if not answer:
            raw = response if isinstance(response, bytes) else response.SerializeToString()
            answer.append(pb.ScoreResponse.FromString(raw))
        return response

    def report(*_: Any) -> None:
        with open(os.environ["UNARY_OVERHEAD_REPORT"], "w") as f:
            f.write(f"{spent[0]} {spent[1]}")
        spent[0], spent[1] = 0, 0.0

    async def noop(request: pb.ScoreRequest, context: Any) -> pb.ScoreResponse:
        return answer[0]

    service.ScoringService.Score = timed_score  # type: ignore[method-assign]
    signal.signal(signal.SIGUSR1, report)

    def server(*args: Any, **kwargs: Any) -> Any:
        if drop:
            kwargs.pop("interceptors", None)
        s = original(*args, **kwargs)
        unary = grpc.unary_unary_rpc_method_handler(
            echo_server.unary,
            request_deserializer=pb.ScoreRequest.FromString,
            response_serializer=pb.ScoreRequest.SerializeToString,
        )
        no_op = grpc.unary_unary_rpc_method_handler(
            noop,
            request_deserializer=pb.ScoreRequest.FromString,
            response_serializer=pb.ScoreResponse.SerializeToString,
        )
        methods = {"Unary": unary, "NoOp": no_op}
        s.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("Echo", methods),))
        return s

    grpc.aio.server = server
    sys.argv = ["scorewire", "serve", "--port", "0"]
    sys.exit(main())


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of one process (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except FileNotFoundError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK


def descendants(pid: int) -> list[int]:
    """Every process below `pid` (the scoring workers and their forkserver)."""
    kids = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parent = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if parent == pid:
                kids.append(int(entry))
    return kids + [g for k in kids for g in descendants(k)]


async def _load(call: Any, req: Any, n: int) -> float:
    remaining = iter(range(n))

    async def worker() -> None:
        for _ in remaining:
            await call(req)

    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
    return n / (time.perf_counter() - t0)


def measure(rounds: int, calls: int, no_interceptors: bool) -> None:
    from scorewire.client import _convert
    from scorewire.v1 import scoring_pb2 as pb
    from scorewire.v1 import scoring_pb2_grpc as pb_grpc

    state = tempfile.mkdtemp(prefix="unary-overhead-")
    env = E.server_env(state)
    env["UNARY_OVERHEAD_NO_INTERCEPTORS"] = "1" if no_interceptors else "0"
    report = os.path.join(state, "score-handler-cpu")
    env["UNARY_OVERHEAD_REPORT"] = report
    srv, addr = E.start([sys.executable, str(Path(__file__).resolve()), "--serve"], env)
    echo, echo_addr = E.start([sys.executable, str(ROOT / "bench/echo_server.py")])
    req = _convert.score_request(
        output=E.SCORE_OUTPUT,
        sample=E.SCORE_SAMPLE,
        checks=E.SCORE_CHECKS,
        compact=None,
        budget_usd=None,
    )
    rates: dict[str, list[float]] = {}
    cpu: dict[str, list[tuple[float, float]]] = {}
    handler_us: list[float] = []

    def handler_cpu() -> tuple[int, float]:
        """Calls and seconds inside Score since the last report (between rounds: blocks)."""
        if os.path.exists(report):
            os.remove(report)
        os.kill(srv.pid, signal.SIGUSR1)
        for _ in range(200):
            time.sleep(0.01)
            if os.path.exists(report):
                with open(report) as f:
                    text = f.read().split()
                if len(text) == 2:
                    return int(text[0]), float(text[1])
        raise RuntimeError("the server did not report the Score handler's CPU")

    async def run() -> None:
        async with (
            grpc.aio.insecure_channel(addr) as ch,
            grpc.aio.insecure_channel(echo_addr) as echo_ch,
        ):

            def method(channel: Any, name: str, response: Any) -> Any:
                return channel.unary_unary(
                    f"/Echo/{name}",
                    request_serializer=pb.ScoreRequest.SerializeToString,
                    response_deserializer=response.FromString,
                )

            score = pb_grpc.ScoringServiceStub(ch).Score
            await score(req)  # the no-op's answer
            paths = {
                "bare echo": (method(echo_ch, "Unary", pb.ScoreRequest), echo.pid),
                "echo in scorewire": (method(ch, "Unary", pb.ScoreRequest), srv.pid),
                "no-op, Score's types": (method(ch, "NoOp", pb.ScoreResponse), srv.pid),
                "Score": (score, srv.pid),
            }
            for call, _ in paths.values():  # warm up: connections, plan cache, inline Score
                await _load(call, req, 500)
            for _ in range(rounds):
                for name, (call, pid) in paths.items():
                    kids = descendants(pid)
                    if name == "Score":
                        handler_cpu()
                    own, theirs = cpu_s(pid), sum(cpu_s(k) for k in kids)
                    rates.setdefault(name, []).append(await _load(call, req, calls))
                    if name == "Score":
                        n, seconds = handler_cpu()
                        handler_us.append(seconds / max(n, 1) * 1e6)
                    cpu.setdefault(name, []).append(
                        (
                            (cpu_s(pid) - own) / calls * 1e6,
                            (sum(cpu_s(k) for k in kids) - theirs) / calls * 1e6,
                        )
                    )

    try:
        asyncio.run(run())
    finally:
        E.stop(srv, echo)
    base = rates["bare echo"]
    print(f"{rounds} rounds of {calls} calls, {CONCURRENCY} in flight", end="")
    print(", interceptors off" if no_interceptors else ", default interceptors")
    for name, values in rates.items():
        ratios = [v / b for v, b in zip(values, base, strict=True)]
        own = statistics.median(c[0] for c in cpu[name])
        kids = statistics.median(c[1] for c in cpu[name])
        print(
            f"  {name:21s} server CPU {own:4.0f} µs/call (children {kids:3.0f})"
            f"  {statistics.median(values):6.0f} req/s"
            f"  / bare echo {statistics.median(ratios):.2f} ({min(ratios):.2f}-{max(ratios):.2f})"
        )
    print(
        f"  Score's handler itself: {statistics.median(handler_us):.0f} µs/call of thread CPU"
        f" ({min(handler_us):.0f}-{max(handler_us):.0f})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=6000)
    parser.add_argument("--no-interceptors", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve_with_echo()
    else:
        measure(args.rounds, args.calls, args.no_interceptors)


if __name__ == "__main__":
    main()
