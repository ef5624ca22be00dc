"""A server SIGKILLed while it ingests and consumes: no acknowledged observation is lost,
and none is scored twice.

A real `scorewire serve` process queues observations into the test's queue (its state
directory's SQLite file, a real Redis or a real PostgreSQL) and scores them by a rule
whose check sleeps (`test.slow`), so batches are in flight in the consumer when the kill
lands, in the middle of an Observe call. A second server on the same queue and run store
(its lease shortened), standing for the replica that lives on, scores what the dead one
left: every acknowledged observation is in the rule's runs once, those the dead server
had recorded and not yet marked done included (the run store keys what it recorded).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import grpc
from scorewire.observe.rules import parse_rules
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc
from scorewire.v1 import runs_pb2 as rpb

import tests.server.custom_checks  # noqa: F401 - registers test.slow, the rule's check
from tests.observe.conftest import QueueEngine
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.support.servers import serve_process
from tests.support.wait import wait_until_async

RULES = {"rules": [{"name": "slow", "checks": [{"type": "test.slow"}]}]}
PER_CALL = 64
FIRST_CALLS = 8
"""Calls answered before the kill (one after another)."""
CALLERS = 4
"""Concurrent callers while the kill lands: some of their calls are in flight."""
KILL_AT = 24
"""The call whose start sets off the kill, a few milliseconds later."""
MAX_CALLS = 100
"""Calls at most (the kill comes long before)."""


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


def _batch(b: int) -> list[opb.Observation]:
    batch = [observation(f"o{b}-{i}", oid=f"o{b}-{i}") for i in range(PER_CALL)]
    for o in batch:
        o.sample.metadata["sleep"] = 0.3
    return batch


async def _ingest_and_kill(address: str, proc: subprocess.Popen[str]) -> tuple[list[str], int]:
    """Send FIRST_CALLS batches, give the consumer time to record some, then send from
    CALLERS concurrent callers and kill the server as call KILL_AT starts; (the ids
    acknowledged, how many calls were made)."""
    acked: list[str] = []
    calls = 0
    async with grpc.aio.insecure_channel(address) as channel:
        stub = observe_pb2_grpc.ObserveServiceStub(channel)

        async def send() -> None:
            nonlocal calls
            while calls < MAX_CALLS:
                request = opb.ObserveRequest(observations=_batch(calls))
                calls += 1
                if calls == KILL_AT:
                    asyncio.get_running_loop().call_later(0.005, os.kill, proc.pid, signal.SIGKILL)
                answer = await stub.Observe(request, timeout=10)
                acked.extend(a.observation_id for a in answer.acks)

        for _ in range(FIRST_CALLS):
            request = opb.ObserveRequest(observations=_batch(calls))
            calls += 1
            answer = await stub.Observe(request)
            acked.extend(a.observation_id for a in answer.acks)
        await asyncio.sleep(1.5)  # the consumer has taken batches and recorded some
        callers = [asyncio.ensure_future(send()) for _ in range(CALLERS)]
        for caller in callers:  # a call not answered may be queued, or not
            try:
                await caller
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.UNAVAILABLE, err
    assert calls < MAX_CALLS
    return acked, calls


async def test_a_killed_replica_loses_no_acknowledged_observation_and_scores_none_twice(
    queue_engine: QueueEngine, tmp_path: Path
) -> None:
    (tmp_path / "rules.yaml").write_text(
        "rules:\n  - name: slow\n    checks: [{type: test.slow}]\n", encoding="utf-8"
    )
    env = {
        "SCOREWIRE_STATE_DIR": str(tmp_path),
        "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml",
        "SCOREWIRE_OBSERVE_QUEUE_MAX": "10000",
        **queue_engine.env(),
    }
    args = ("--imports", "tests.server.custom_checks")
    proc, address = serve_process(env, *args, stderr=subprocess.PIPE)
    try:
        assert proc.stderr is not None
        # blocking reads (the test's timeout bounds them): the line comes, or the pipe ends
        chosen = "-"
        while chosen and "serving on" not in chosen:
            chosen = proc.stderr.readline()
        acked, calls = await _ingest_and_kill(address, proc)
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
    # the start-up line names the queue it chose, without credentials
    expected = {"sqlite": f"sqlite:{queue_engine.path}", "redis": "redis:redis://127.0.0.1"}
    assert f"observe queue {expected.get(queue_engine.name, 'postgresql://127.0.0.1:')}" in chosen
    assert len(set(acked)) >= FIRST_CALLS * PER_CALL

    # Each server owns (and closes) its queue and run store.
    queue = queue_engine.open(max_depth=10_000, lease_s=0.5)
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    async with observe_server(queue, parse_rules(RULES), runs=store, consume=False) as srv:
        before = Counter(await _sample_ids(srv))  # what the dead server recorded
    queue = queue_engine.open(max_depth=10_000, lease_s=0.5)
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    async with observe_server(queue, parse_rules(RULES), runs=store) as srv:

        async def drained() -> bool:
            return await queue.depth() == 0

        await wait_until_async(drained, "the dead server's observations scored", timeout_s=30)
        seen = Counter(await _sample_ids(srv))
    assert set(acked) <= set(seen), "acknowledged and never scored"
    assert set(seen) <= {f"o{b}-{i}" for b in range(calls) for i in range(PER_CALL)}
    twice = {i for i, n in seen.items() if n > 1}
    assert all(n == 1 for n in before.values())
    # Recorded before the kill and not yet marked done: found recorded, not scored again.
    assert not twice, (len(before), sorted(twice))
    print(
        f"{queue_engine.name}: acknowledged {len(acked)} of {calls * PER_CALL} sent, recorded "
        f"before the kill {len(before)}, scored twice {len(twice)}"
    )
