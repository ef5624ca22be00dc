"""LabelService errors that tell the truth: what was stored, which input was bad.

Through a real server: retries by request id, a SQLite file locked by another process,
crafted page tokens, and bytes that are not a message.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from asyncio.subprocess import PIPE

import grpc
import pytest
from google.protobuf import json_format
from scorewire.labels.label_model import LabelQuery, output_hash
from scorewire.labels.postgres import PostgresLabelStore
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.server.labels_service import _query_digest
from scorewire.v1 import labels_pb2 as lpb

from tests.labels.conftest import LabelServer, start_label_server
from tests.labels.test_label_service import bad_request

HASH = output_hash("Paris")
NOTHING_STORED = "nothing was stored"


def pb_label(**fields) -> lpb.Label:
    base = {"sampleId": "s1", "outputHash": HASH, "passed": True, "labeller": "ana"}
    return json_format.ParseDict(base | fields, lpb.Label())


async def history(srv: LabelServer) -> list[tuple[str, bool]]:
    resp = await srv.labels.ListLabels(
        lpb.ListLabelsRequest(include_history=True, page_size=1000), timeout=30
    )
    return [(lb.sample_id, lb.passed) for lb in resp.labels]


@pytest.fixture(params=["sqlite", "postgres"])
async def any_server(request, tmp_path) -> object:
    if request.param == "sqlite":
        store: object = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    else:
        store = await PostgresLabelStore.open(request.getfixturevalue("pg_url"))
    srv = await start_label_server(store)  # type: ignore[arg-type]
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.stop()
        await store.close()  # type: ignore[attr-defined]


# ---- idempotent writes -----------------------------------------------------------------------


async def test_a_retried_put_with_its_request_id_is_stored_once(any_server) -> None:
    # The retry answers as the first call did (same labels, same created_at), storing nothing new.
    request = lpb.PutLabelsRequest(labels=[pb_label(), pb_label(sampleId="s2")], request_id="r-1")
    first = await any_server.labels.PutLabels(request, timeout=10)
    again = await any_server.labels.PutLabels(request, timeout=10)
    assert list(again.labels) == list(first.labels)
    assert await history(any_server) == [("s1", True), ("s2", True)]


async def test_concurrent_puts_with_one_request_id_store_once(any_server) -> None:
    request = lpb.PutLabelsRequest(labels=[pb_label()], request_id="r-race")
    answers = await asyncio.gather(
        *(any_server.labels.PutLabels(request, timeout=10) for _ in range(4))
    )
    assert len({a.SerializeToString(deterministic=True) for a in answers}) == 1
    assert await history(any_server) == [("s1", True)]


async def test_a_request_id_reused_for_other_labels_is_invalid_argument(any_server) -> None:
    await any_server.labels.PutLabels(
        lpb.PutLabelsRequest(labels=[pb_label()], request_id="r-2"), timeout=10
    )
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await any_server.labels.PutLabels(
            lpb.PutLabelsRequest(labels=[pb_label(passed=False)], request_id="r-2"), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id" in bad_request(err.value)
    assert await history(any_server) == [("s1", True)]


@pytest.mark.parametrize("request_id", ["x" * 129, "has space", "ünïcode"])
async def test_a_malformed_request_id_is_invalid_argument(label_server, request_id) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await label_server.labels.PutLabels(
            lpb.PutLabelsRequest(labels=[pb_label()], request_id=request_id), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id" in bad_request(err.value)


# ---- a SQLite file locked by another process -----------------------------------------------

_HOLDER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.readline()
db.execute("COMMIT")
"""


@pytest.mark.slow
async def test_puts_behind_a_lock_held_by_another_process_report_what_was_stored(
    tmp_path,
) -> None:
    # Finding 6: with another process holding the write lock for ~5.5 s, three puts
    # together answered UNAVAILABLE "nothing was stored" for labels that were then stored.
    path = str(tmp_path / "labels.db")
    store = await SqliteLabelStore.open(path)
    srv = await start_label_server(store)
    holder = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _HOLDER, path, stdin=PIPE, stdout=PIPE
    )
    try:
        assert holder.stdout is not None and holder.stdin is not None
        assert (await holder.stdout.readline()).strip() == b"locked"
        requests = [
            lpb.PutLabelsRequest(labels=[pb_label(sampleId=f"s{i}")], request_id=f"lock-{i}")
            for i in range(3)
        ]
        calls = [asyncio.ensure_future(srv.labels.PutLabels(r, timeout=30)) for r in requests]
        # Release the lock only once two calls have answered (the store gave up on them),
        # so a write the server abandoned could still commit afterwards.
        while sum(c.done() for c in calls) < 2:
            await asyncio.wait(calls, return_when=asyncio.FIRST_COMPLETED, timeout=30)
        holder.stdin.write(b"release\n")
        await holder.stdin.drain()
        assert await asyncio.wait_for(holder.wait(), 30) == 0
        await asyncio.wait(calls, timeout=30)
        stored = {sample for sample, _ in await history(srv)}  # queued behind every write
        unsure = []
        for i, call in enumerate(calls):
            err = call.exception()
            if err is None:
                assert f"s{i}" in stored, "acknowledged but not stored"
                continue
            assert isinstance(err, grpc.aio.AioRpcError)
            assert err.code() == grpc.StatusCode.UNAVAILABLE
            if NOTHING_STORED in (err.details() or ""):
                assert f"s{i}" not in stored, f"put {i} said {err.details()!r} but was stored"
            else:
                assert "request_id" in (err.details() or "")  # it says how to retry safely
                unsure.append(i)
        # Retrying every call with its request id leaves each label stored exactly once.
        for r in requests:
            await srv.labels.PutLabels(r, timeout=30)
        assert sorted(await history(srv)) == [("s0", True), ("s1", True), ("s2", True)]
    finally:
        if holder.returncode is None:
            holder.kill()
            await holder.wait()
        await srv.channel.close()
        await srv.stop()
        await store.close()


# ---- malformed wire input ------------------------------------------------------------------


def crafted_token(after: int, query: LabelQuery) -> str:
    raw = json.dumps({"after": after, "query": _query_digest(query)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("after", [2**63, 2**64 + 5, 10**30])
async def test_a_page_token_past_the_id_range_is_invalid_argument(any_server, after) -> None:
    # Finding 6: a crafted token with after >= 2^63 was INTERNAL (SQLite) or UNAVAILABLE.
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await any_server.labels.ListLabels(
            lpb.ListLabelsRequest(page_token=crafted_token(after, LabelQuery())), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in bad_request(err.value)


async def test_the_largest_id_is_still_a_valid_page_token(label_server) -> None:
    resp = await label_server.labels.ListLabels(
        lpb.ListLabelsRequest(page_token=crafted_token(2**63 - 1, LabelQuery())), timeout=10
    )
    assert list(resp.labels) == []


BAD_UTF8_LABEL = b"\x0a\x04\x0a\x02\xff\xfe"  # labels { sample_id: <invalid UTF-8> }
TRUNCATED = b"\x0a\x10\x0a"  # a length prefix longer than the message


@pytest.mark.parametrize("payload", [BAD_UTF8_LABEL, TRUNCATED])
@pytest.mark.parametrize("method", ["PutLabels", "ListLabels"])
async def test_bytes_that_do_not_parse_are_invalid_argument(label_server, method, payload) -> None:
    # Finding 6: undecodable bytes sent to LabelService were UNKNOWN.
    raw = label_server.channel.unary_unary(f"/scorewire.v1.LabelService/{method}")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await raw(payload, timeout=10)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "request" in bad_request(err.value)
    assert await history(label_server) == []
