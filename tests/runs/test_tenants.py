"""Whose runs a token sees, over a real TLS server with bearer tokens on (SQLite and PostgreSQL).

A run belongs to the token that made it (its name is the run's caller, the token never
stored); a token sees only its own runs, and an `admin` token every run.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import AsyncIterator

import grpc
import pytest
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import CHECKS, RunServer, case, start_run_server

ROLES = {"checkout": "caller", "search": "caller", "root": "admin"}


def token(name: str) -> str:
    return f"token-of-{name}-0123456789"


def md(name: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token(name)}"),)


@pytest.fixture
async def srv(open_store, pki) -> AsyncIterator[RunServer]:
    tokens = json.dumps(
        [
            {"name": n, "sha256": hashlib.sha256(token(n).encode()).hexdigest(), "role": r}
            for n, r in ROLES.items()
        ]
    )
    server = await start_run_server(
        await open_store(),
        credentials=grpc.ssl_channel_credentials(root_certificates=pki["ca"]),
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        auth_tokens=tokens,
    )
    try:
        yield server
    finally:
        await server.stop()


async def record(srv: RunServer, who: str, name: str = "nightly") -> str:
    req = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Paris")], record=True, run_name=name)
    summary = pb.RunSummary()
    async for ev in srv.scoring.RunSuite(req, metadata=md(who)):
        if ev.WhichOneof("event") == "summary":
            summary = ev.summary
    return summary.run_id


async def listed(srv: RunServer, who: str) -> list[str]:
    resp = await srv.runs.ListRuns(rpb.ListRunsRequest(), metadata=md(who))
    return [r.run_id for r in resp.runs]


async def test_a_token_lists_only_its_own_runs_and_admin_lists_all(srv: RunServer) -> None:
    mine, theirs = await record(srv, "checkout"), await record(srv, "search")
    assert await listed(srv, "checkout") == [mine]
    assert await listed(srv, "search") == [theirs]
    assert await listed(srv, "root") == [theirs, mine]
    got = await srv.runs.GetRun(rpb.GetRunRequest(run_id=mine), metadata=md("root"))
    assert got.run.caller == "checkout"
    assert token("checkout") not in str(got)


@pytest.mark.parametrize(
    "call",
    [
        lambda s, rid: s.runs.GetRun(rpb.GetRunRequest(run_id=rid), metadata=md("search")),
        lambda s, rid: s.runs.ListRunResults(
            rpb.ListRunResultsRequest(run_id=rid), metadata=md("search")
        ),
        lambda s, rid: s.runs.DeleteRun(rpb.DeleteRunRequest(run_id=rid), metadata=md("search")),
        lambda s, rid: s.runs.CompareRuns(
            rpb.CompareRunsRequest(base_run_id=rid, run_id=rid), metadata=md("search")
        ),
    ],
)
async def test_another_tokens_run_is_not_found(srv: RunServer, call) -> None:
    rid = await record(srv, "checkout")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(srv, rid)
    assert err.value.code() == grpc.StatusCode.NOT_FOUND
    # ... and it is still there for its owner.
    await srv.runs.GetRun(rpb.GetRunRequest(run_id=rid), metadata=md("checkout"))


async def test_a_baseline_by_name_is_the_callers_own_newest_run(srv: RunServer) -> None:
    await record(srv, "checkout", name="shared-name")
    req = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Berlin")])
    req.gate.baseline = "shared-name"
    # search has no run of that name: checkout's run is not its baseline.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        async for _ in srv.scoring.RunSuite(req, metadata=md("search")):
            pass
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    summary = pb.RunSummary()
    async for ev in srv.scoring.RunSuite(req, metadata=md("checkout")):
        summary = ev.summary if ev.WhichOneof("event") == "summary" else summary
    assert not summary.gate_passed


async def test_unauthenticated_calls_to_the_run_service_are_refused(srv: RunServer) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await srv.runs.ListRuns(rpb.ListRunsRequest())
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED
