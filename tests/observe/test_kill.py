"""A server SIGKILLed while it consumes: no acknowledged observation is lost.

A real `scorewire serve` process queues observations into its state directory's SQLite
queue and scores them by a rule whose check sleeps (`test.slow`), so the kill lands while
batches are in flight. A new server on the same queue and run store (its lease shortened)
scores what the dead one left: every acknowledged observation is in the rule's runs.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections import Counter
from pathlib import Path

import grpc
from scorewire.observe.consumer import BATCH
from scorewire.observe.queue import SqliteQueue
from scorewire.observe.rules import parse_rules
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc
from scorewire.v1 import runs_pb2 as rpb

import tests.server.custom_checks  # noqa: F401 - registers test.slow, the rule's check
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.support.servers import serve_process
from tests.support.wait import wait_until_async

RULES = {"rules": [{"name": "slow", "checks": [{"type": "test.slow"}]}]}
COUNT = 1024


async def _sample_ids(srv: ObserveServer) -> list[str]:
    ids: list[str] = []
    runs = await srv.runs.ListRuns(rpb.ListRunsRequest(labels={"observe_rule": "slow"}))
    for run in runs.runs:
        token = ""
        while True:
            page = await srv.runs.ListRunResults(
                rpb.ListRunResultsRequest(run_id=run.run_id, page_size=500, page_token=token)
            )
            ids.extend(r.result.sample_id for r in page.results)
            token = page.next_page_token
            if not token:
                break
    return ids


async def test_a_killed_consumer_loses_no_acknowledged_observation(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "rules.yaml").write_text(
        "rules:\n  - name: slow\n    checks: [{type: test.slow}]\n", encoding="utf-8"
    )
    env = {"SCOREWIRE_STATE_DIR": str(state), "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml"}
    proc, address = serve_process(env, "--imports", "tests.server.custom_checks")
    acked: list[str] = []
    try:
        async with grpc.aio.insecure_channel(address) as channel:
            stub = observe_pb2_grpc.ObserveServiceStub(channel)
            for b in range(COUNT // 64):
                batch = [observation(f"o{b}-{i}", oid=f"o{b}-{i}") for i in range(64)]
                for o in batch:
                    o.sample.metadata["sleep"] = 0.3
                answer = await stub.Observe(opb.ObserveRequest(observations=batch))
                acked.extend(a.observation_id for a in answer.acks)
            await asyncio.sleep(0.3)  # a few batches in, most still queued or in flight
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    assert len(set(acked)) == COUNT
    queue = SqliteQueue(state / "observe.db", max_depth=10_000, lease_s=0.5)
    store = await SqliteRunStore.open(str(state / "runs.db"))
    async with observe_server(queue, parse_rules(RULES), runs=store) as srv:
        before = len(await _sample_ids(srv))

        async def drained() -> bool:
            return await queue.depth() == 0

        await wait_until_async(drained, "the dead server's observations scored", timeout_s=15)
        ids = await _sample_ids(srv)
    seen = Counter(ids)
    assert set(seen) == set(acked)  # none lost
    twice = [i for i, n in seen.items() if n > 1]
    # Recorded before the kill and not yet marked done: found recorded, not again.
    assert twice == [], (before, len(twice))
    print(f"recorded before the kill {before}, of {BATCH} a batch")
