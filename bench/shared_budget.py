"""What a server-wide judge budget spends over several processes, per process vs in Redis.

Run: `.venv/bin/python bench/shared_budget.py` (`--help` for the flags). Loopback only.

Starts `--replicas` (2) `scorewire serve` processes (or one with `--workers`) judged by
the OpenAI stand-in, whose every answer reports nearly its ceiling, with a server-wide
budget of `--budget` ($0.0035: four calls), and sends `--calls` (32) different judge
checks at once, round-robin. Twice: with the verdict cache in memory (budgets per
process, as before issue 16) and with one shared Redis (budgets in Redis). Reported per
mode: upstream calls, dollars spent (calls × the call's cost, as the stand-in counts
them), spent / budget, and the wall time of the burst.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from scorewire.judge.pricing import PriceTable
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.redis import RedisServer
from tests.support.replicas import REPLICA_KEY, Replicas, replica_env
from tests.support.servers import free_port

JUDGE = pb.CheckSpec(name="helpful", type="judge", params={"rubric": "Is the answer helpful?"})
REPLY = Reply(
    content=json.dumps({"reasoning": "r", "score": 5}), input_tokens=1300, output_tokens=1024
)


def burst(args: argparse.Namespace, cache_url: str, base: Path) -> dict[str, float]:
    fake = FakeOpenAI(default=REPLY, api_key=REPLICA_KEY)
    with fake.running():
        env = replica_env(fake, cache_url, base, judge_budget_usd=str(args.budget))
        extra = ("--workers", str(args.workers)) if args.workers > 1 else ()
        count = 1 if args.workers > 1 else args.replicas
        port = free_port() if args.workers > 1 else 0
        with Replicas(count, env, *extra, port=port) as replicas:
            if args.workers > 1:
                # Connections (not calls) are spread over the workers: one per call, after
                # a warm-up that gives the second worker time to bind.
                for _ in range(20):
                    _stub(replicas, 0).Score(
                        pb.ScoreRequest(output=pb.Output(text="x"), compact=["contains:x"]),
                        timeout=30,
                    )
                stubs = [_stub(replicas, 0) for _ in range(args.calls)]
            else:
                stubs = [_stub(replicas, i % count) for i in range(args.calls)]
            start = time.perf_counter()
            with ThreadPoolExecutor(args.calls) as pool:
                list(
                    pool.map(
                        lambda i: stubs[i].Score(
                            pb.ScoreRequest(output=pb.Output(text=f"a{i}"), checks=[JUDGE]),
                            timeout=120,
                        ),
                        range(args.calls),
                    )
                )
            wall = time.perf_counter() - start
        cost = PriceTable().cost("gpt-4o-mini", 1300, 1024) or 0.0
        spent = fake.calls * cost
        return {"calls": fake.calls, "spent": spent, "ratio": spent / args.budget, "wall": wall}


def _stub(replicas: Replicas, i: int):  # type: ignore[no-untyped-def]
    from scorewire.v1 import scoring_pb2_grpc

    return scoring_pb2_grpc.ScoringServiceStub(replicas.channel(i))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=2)
    parser.add_argument("--workers", type=int, default=1, help="one server, N workers")
    parser.add_argument("--budget", type=float, default=0.0035)
    parser.add_argument("--calls", type=int, default=32)
    args = parser.parse_args()
    shape = f"--workers {args.workers}" if args.workers > 1 else f"{args.replicas} replicas"
    print(f"{shape}, server budget ${args.budget}, {args.calls} different judge checks at once")
    with tempfile.TemporaryDirectory() as tmp, RedisServer() as redis:
        for mode, url in (("per process", "memory://"), ("shared in Redis", redis.url)):
            r = burst(args, url, Path(tmp) / mode.replace(" ", "-"))
            print(
                f"{mode:>16}: {r['calls']:.0f} upstream calls, ${r['spent']:.6f} spent = "
                f"{r['ratio']:.2f}x the budget, burst {r['wall']:.2f} s"
            )


if __name__ == "__main__":
    main()
