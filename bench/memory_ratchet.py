"""Does the server give memory back? RSS after each of several rounds of big requests.

    .venv/bin/python bench/memory_ratchet.py [--rounds 6]

Starts `scorewire serve` (defaults, metrics on, loopback, a free port) and sends, each
round, three of `hostile_neighbour.py`'s attacks one after another: 64 bleu checks and
64 max_tokens checks on a 10 MB output, and a RunSuite of 40,000 cases. After each round
(and a 0.3 s pause) it prints the serving process's RSS and its process tree's (scoring
workers and forkserver included). A server that keeps what big requests freed climbs
round after round; one that returns it stays level.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

import grpc  # noqa: E402
import hostile_neighbour as hn  # noqa: E402
from scorewire.v1 import scoring_pb2_grpc as pb_grpc  # noqa: E402

PAUSE_S = 1.5
"""After a round: the server checks whether to trim its heap once a second."""
ATTACKS = ("10 MB x 64 bleu", "10 MB x 64 max_tokens", "RunSuite 40,000 cases x 6 checks")


def descendants(pid: int) -> list[int]:
    """Every process under `pid`."""
    out, todo = [], [pid]
    while todo:
        kids = hn._children(todo.pop())
        out.extend(kids)
        todo.extend(kids)
    return out


def rss_mb(pid: int) -> int:
    """VmRSS of one process, in MB."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024
    except OSError:
        pass
    return 0


async def rounds(address: str, pid: int, n: int) -> None:
    chosen = {name: (method, req) for name, method, req in hn.attacks() if name in ATTACKS}
    async with grpc.aio.insecure_channel(address, options=hn.OPTIONS) as ch:
        stub = pb_grpc.ScoringServiceStub(ch)
        print(f"before: server {rss_mb(pid)} MB, tree {hn.tree_rss(pid) >> 20} MB")
        for r in range(1, n + 1):
            for name in ATTACKS:
                method, req = chosen[name]
                try:
                    call = getattr(stub, method)(req, timeout=30)
                    if method == "RunSuite":
                        async for _ in call:
                            pass
                    else:
                        await call
                except grpc.aio.AioRpcError:
                    pass  # refused (RESOURCE_EXHAUSTED) is an answer too
            await asyncio.sleep(PAUSE_S)
            kids = " ".join(str(rss_mb(k)) for k in sorted(descendants(pid)))
            print(
                f"round {r}: server {rss_mb(pid)} MB, tree {hn.tree_rss(pid) >> 20} MB "
                f"(children: {kids} MB)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=6)
    args = parser.parse_args()
    proc, address = hn.start_server(None)
    try:
        asyncio.run(rounds(address, proc.pid, args.rounds))
    finally:
        hn.stop_server(proc)


if __name__ == "__main__":
    main()
