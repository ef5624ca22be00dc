"""Tenants of online evaluation, with bearer tokens on: the tenant is the caller's token.

The tenant decides the share of the scoring workers an observation's scoring takes and
whose rolling runs hold its scores; a caller cannot claim another tenant's.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import grpc
import pytest
from scorewire.core.fairness import tenant_key
from scorewire.observe.queue import QueueFull, SqliteQueue
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import runs_pb2 as rpb

from tests.observe.conftest import QueueOpener
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.support.rpc import bad_request
from tests.support.wait import wait_until_async

ROLES = {"checkout": "caller", "search": "caller", "root": "admin"}
TOKENS = json.dumps(
    [
        {"name": n, "sha256": hashlib.sha256(f"t-{n}".encode()).hexdigest(), "role": r}
        for n, r in ROLES.items()
    ]
)


def md(name: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer t-{name}"),)


async def _runs(srv: ObserveServer, who: str) -> list[rpb.Run]:
    query = rpb.ListRunsRequest(labels={"observe_rule": "all"})
    return list((await srv.runs.ListRuns(query, metadata=md(who))).runs)


async def test_the_rolling_run_is_the_callers_tenants_and_no_other_tenant_reads_it(
    tmp_path: Path,
) -> None:
    # checkout's observations claim no tenant: the server writes checkout's, scores them in
    # checkout's share of the workers and records them where search cannot list or read
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = SqliteQueue(tmp_path / "observe.db", max_depth=100)
    async with observe_server(queue, runs=store, auth_tokens=TOKENS) as srv:
        batch = [observation("Paris"), observation("Lyon")]
        await srv.observe.Observe(opb.ObserveRequest(observations=batch), metadata=md("checkout"))
        (run,) = await wait_until_async(lambda: _runs(srv, "checkout"), "checkout's run")
        assert run.name.startswith("observe/all/")
        assert await _runs(srv, "search") == []
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.runs.GetRun(rpb.GetRunRequest(run_id=run.run_id), metadata=md("search"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        assert [r.run_id for r in await _runs(srv, "root")] == [run.run_id]
        pool = srv.running.service.executor.pool
        assert pool is not None
        assert set(pool.by_tenant) == {tenant_key("checkout")}


async def test_a_caller_claiming_another_tenant_is_permission_denied(tmp_path: Path) -> None:
    # metadata.tenant is the caller's to fill, not to choose: nothing of the batch is queued
    queue = SqliteQueue(tmp_path / "observe.db", max_depth=100)
    claimed = observation("Paris")
    claimed.metadata.tenant = "checkout"
    own = observation("Lyon")
    own.metadata.tenant = "search"
    request = opb.ObserveRequest(observations=[own, claimed])
    async with observe_server(queue, consume=False, auth_tokens=TOKENS) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(request, metadata=md("search"))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        assert list(bad_request(err.value)) == ["observations[1].metadata.tenant"]
        assert await queue.depth() == 0
        # an admin token (a gateway) may observe for the tenants behind it
        answer = await srv.observe.Observe(request, metadata=md("root"))
        assert [a.status for a in answer.acks] == [opb.OBSERVATION_STATUS_QUEUED] * 2


async def test_a_tenant_filling_its_share_is_refused_while_another_is_queued(
    open_queue: QueueOpener,
) -> None:
    # one tenant's flood fills its share, not the queue: the next tenant still gets in
    queue = await open_queue(max_depth=100, max_per_tenant=2)
    async with observe_server(queue, consume=False, auth_tokens=TOKENS) as srv:
        two = opb.ObserveRequest(observations=[observation("a"), observation("b")])
        await srv.observe.Observe(two, metadata=md("checkout"))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(
                opb.ObserveRequest(observations=[observation("c")]), metadata=md("checkout")
            )
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT" in (err.value.details() or "")
        assert await queue.depth() == 2
        answer = await srv.observe.Observe(two, metadata=md("search"))
        assert [a.status for a in answer.acks] == [opb.OBSERVATION_STATUS_QUEUED] * 2
        assert await queue.depth() == 4


async def test_a_tenants_share_frees_as_its_observations_are_done(
    open_queue: QueueOpener,
) -> None:
    # the share counts what is queued or being scored, not what was ever sent
    queue = await open_queue(max_depth=100, max_per_tenant=1)
    obs = observation("a", oid="one")
    await queue.put([("one", obs.SerializeToString())], ["checkout"])
    with pytest.raises(QueueFull, match="MAX_PER_TENANT"):
        await queue.put([("two", b"x")], ["checkout"])
    (taken,) = await queue.take(10)
    assert taken.tenant == "checkout"
    await queue.done([taken])
    await queue.done([taken])  # done twice (two consumers): counted off once
    assert await queue.put([("two", b"x"), ("three", b"y")], ["checkout", "search"]) == [
        True,
        True,
    ]
    with pytest.raises(QueueFull, match="MAX_PER_TENANT"):
        await queue.put([("four", b"z")], ["checkout"])
