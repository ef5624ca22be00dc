"""Which of scorewire's files one call passes through: a newcomer's walk, measured.

Run: `.venv/bin/python bench/walk_files.py`. Serves with the defaults in this process
(metrics off, port 0), sends one unary Score (3 checks) and one RunSuite (2 cases, the
same checks) through the generated stubs, twice each, and lists the `service/scorewire`
modules whose functions ran in the serving process during each call (the profiler hook
sees every Python call on the event loop's thread; the scoring workers, other
processes, are not traced: their part is `scoring/worker.py` and the engine). The
first call compiles the plan; the second finds it cached.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path

import grpc
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

PACKAGE = Path(__file__).resolve().parents[1] / "service" / "scorewire"


def checks() -> list[pb.CheckSpec]:
    return [
        pb.CheckSpec(name="has", type="contains", params={"needles": ["Paris"]}),
        pb.CheckSpec(name="short", type="length", params={"max_chars": 200}),
        pb.CheckSpec(name="shape", type="regex", params={"pattern": "^[A-Z]"}),
    ]


def case(i: int) -> pb.Case:
    return pb.Case(sample=pb.Sample(id=f"s{i}"), output=pb.Output(text="Paris is the capital."))


class Walk:
    """The package's modules whose code ran while `on` is set."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.on = False

    def hook(self, frame, event, arg):  # type: ignore[no-untyped-def]
        if self.on and event == "call":
            name = frame.f_code.co_filename
            if name.startswith(str(PACKAGE)):
                self.files.add(str(Path(name).relative_to(PACKAGE)))


async def main() -> None:
    running, port = await create_server(Settings(host="127.0.0.1", port=0, metrics_enabled=False))
    walk = Walk()
    sys.setprofile(walk.hook)
    threading.setprofile(walk.hook)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = pb_grpc.ScoringServiceStub(channel)
        calls = {
            "Score": lambda: stub.Score(pb.ScoreRequest(checks=checks(), sample=case(0).sample,
                                                        output=case(0).output)),
            "RunSuite": lambda: _drain(stub.RunSuite(pb.RunSuiteRequest(checks=checks(),
                                                                       cases=[case(0), case(1)]))),
        }  # fmt: skip
        for name, call in calls.items():
            for round_ in ("first (compiles)", "second (cached plan)"):
                walk.files, walk.on = set(), True
                await call()
                walk.on = False
                print(f"{name}, {round_}: {len(walk.files)} files")
                print("  " + ", ".join(sorted(walk.files)))
    sys.setprofile(None)
    await running.stop(0)


async def _drain(stream) -> None:  # type: ignore[no-untyped-def]
    async for _ in stream:
        pass


if __name__ == "__main__":
    asyncio.run(main())
