"""The PostgreSQL label store against a real PostgreSQL: replicas, crashes, outages."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import grpc
import psycopg
import pytest
from google.protobuf import json_format
from scorewire.labels import open_label_store
from scorewire.labels.label_model import LabelQuery, LabelsUnavailable
from scorewire.labels.postgres import PostgresLabelStore
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as spb

from tests.labels.conftest import label, start_label_server
from tests.support.postgres import PostgresCluster
from tests.support.servers import free_port
from tests.support.wait import wait_until_async

pytestmark = pytest.mark.slow


async def test_settings_url_opens_a_postgresql_store(pg_url) -> None:
    # SCOREWIRE_LABELS_URL=postgresql://... selects PostgreSQL over the SQLite default.
    store = await open_label_store(Settings(labels_url=pg_url))
    try:
        assert isinstance(store, PostgresLabelStore)
        await store.put([label(note="naïve — ok", check="tone")])
        (got,) = await store.lookup("s1", label().output_hash, "tone")
        assert got == label(note="naïve — ok", check="tone")
    finally:
        await store.close()


async def test_latest_per_labeller_wins_and_history_is_kept(pg_url) -> None:
    store = await PostgresLabelStore.open(pg_url)
    try:
        await store.put([label(passed=False, at=1), label(passed=True, at=9)])
        await store.put([label(passed=False, at=5), label(labeller="bo", passed=False)])
        got = await store.lookup("s1", label().output_hash, "default")
        assert [(lb.labeller, lb.passed) for lb in got] == [("ana", True), ("bo", False)]
        history = await store.list_labels(LabelQuery(include_history=True), after_id=0, limit=99)
        assert len(history) == 4
    finally:
        await store.close()


async def test_concurrent_writers_on_two_replicas_never_clobber(pg_url) -> None:
    # Two stores (two replicas) opening at once race on the schema, then write the
    # same keys concurrently: every label is kept and the latest per labeller wins.
    a, b = await asyncio.gather(PostgresLabelStore.open(pg_url), PostgresLabelStore.open(pg_url))
    try:
        writes = [
            store.put([label(labeller=name, at=i, passed=i % 2 == 1)])
            for i in range(30)
            for store, name in ((a, "ana"), (b, "bo"))
        ]
        await asyncio.gather(*writes)
        history = await a.list_labels(LabelQuery(include_history=True), after_id=0, limit=1000)
        assert len(history) == 60
        latest = await b.lookup("s1", label().output_hash, "default")
        assert [(lb.labeller, lb.created_at.second, lb.passed) for lb in latest] == [
            ("ana", 29, True),
            ("bo", 29, True),
        ]
    finally:
        await a.close()
        await b.close()


async def test_acknowledged_labels_survive_a_database_crash(pg_cluster, pg_url) -> None:
    # `pg_ctl stop -m immediate` is a crash: no checkpoint, WAL replay at start.
    store = await PostgresLabelStore.open(pg_url)
    try:
        await store.put([label(sample_id=f"s{i}") for i in range(20)])
    finally:
        await store.close()
    pg_cluster.stop("immediate")
    pg_cluster.start()
    store = await PostgresLabelStore.open(pg_url)
    try:
        found = await store.list_labels(LabelQuery(), after_id=0, limit=100)
        assert len(found) == 20
    finally:
        await store.close()


async def test_stopped_database_gives_error_scores_and_recovers(
    pg_cluster: PostgresCluster, pg_url
) -> None:
    # Through a real server: while PostgreSQL is down the human check is an error
    # score and PutLabels is UNAVAILABLE; once it is back, both work again.
    store = await PostgresLabelStore.open(pg_url)
    srv = await start_label_server(store)
    digest = label().output_hash
    score = json_format.ParseDict(
        {"sample": {"id": "s1"}, "output": {"text": "Paris"}, "checks": [{"type": "human"}]},
        spb.ScoreRequest(),
    )
    put = lpb.PutLabelsRequest(
        labels=[lpb.Label(sample_id="s1", output_hash=digest, passed=True, labeller="ana")]
    )
    try:
        await srv.labels.PutLabels(put)
        assert (await srv.scoring.Score(score)).scores[0].passed
        pg_cluster.stop("fast")
        try:
            got = (await srv.scoring.Score(score)).scores[0]
            assert got.error.code == "LABELS_UNAVAILABLE" and not got.passed
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await srv.labels.PutLabels(put)
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        finally:
            pg_cluster.start()

        async def recovered() -> Any:
            got = (await srv.scoring.Score(score)).scores[0]
            return got if got.error.code == "" else None

        # the fail-fast window and the pool's reconnect pass
        got = await wait_until_async(recovered, "labels to be read again", interval_s=0.1)
        assert got.passed
    finally:
        await srv.channel.close()
        await srv.stop()
        await store.close()


async def test_a_frozen_database_fails_label_calls_within_the_deadline_and_recovers(
    pg_cluster: PostgresCluster, pg_url
) -> None:
    # PostgreSQL frozen (SIGSTOP): connections stay open and nothing answers, so only
    # the server's deadline (1 s here) ends a call. PutLabels is UNAVAILABLE naming the
    # store, and a human check an error score, well within ten times that; once
    # PostgreSQL runs again the very next PutLabels succeeds, every label acknowledged
    # before is there, and the refused one, which "nothing was stored" said, is not.
    # (Before: 16 s, and calls refused for a second after PostgreSQL was back.)
    store = await open_label_store(Settings(labels_url=pg_url, store_timeout_s=1.0))
    srv = await start_label_server(store, store_timeout_s=1.0)
    digest = label().output_hash

    def put(sample_id: str) -> lpb.PutLabelsRequest:
        one = lpb.Label(sample_id=sample_id, output_hash=digest, passed=True, labeller="ana")
        return lpb.PutLabelsRequest(labels=[one])

    score = json_format.ParseDict(
        {"sample": {"id": "s0"}, "output": {"text": "Paris"}, "checks": [{"type": "human"}]},
        spb.ScoreRequest(),
    )
    try:
        for i in range(20):
            await srv.labels.PutLabels(put(f"s{i}"), timeout=30)
        with pg_cluster.frozen():
            started = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await srv.labels.PutLabels(put("refused"), timeout=30)
            put_s = time.monotonic() - started
            started = time.monotonic()
            human = (await srv.scoring.Score(score, timeout=30)).scores[0]
            score_s = time.monotonic() - started
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        details = err.value.details() or ""
        assert "label store (PostgreSQL) did not answer within 1 s" in details
        assert "nothing was stored" in details and put_s < 10.0
        assert human.error.code == "LABELS_UNAVAILABLE" and not human.passed
        assert "label store (PostgreSQL)" in human.reason and score_s < 10.0
        await srv.labels.PutLabels(put("after"), timeout=30)  # the first call after
        listed = await srv.labels.ListLabels(lpb.ListLabelsRequest(page_size=100), timeout=30)
        ids = sorted(lb.sample_id for lb in listed.labels)
        assert ids == sorted([*(f"s{i}" for i in range(20)), "after"])
        assert (await srv.scoring.Score(score, timeout=30)).scores[0].passed
    finally:
        await srv.channel.close()
        await srv.stop()
        await store.close()


async def test_store_opens_while_the_database_is_down(pg_cluster: PostgresCluster) -> None:
    # A replica starting during an outage starts; label calls fail until the DB answers.
    store = await PostgresLabelStore.open(f"postgresql://scorewire@127.0.0.1:{free_port()}/x")
    try:
        with pytest.raises(LabelsUnavailable):
            await store.lookup("s1", label().output_hash, "default")
    finally:
        await store.close()


def _closed_port() -> int:
    return free_port()


async def test_a_table_made_before_tenants_is_upgraded_in_place(pg_url) -> None:
    # A database written by an earlier version: its labels keep counting (no tenant),
    # and the upgraded table takes labels with tenants.
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            """CREATE TABLE scorewire_label_history (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, sample_id TEXT NOT NULL,
                output_hash TEXT NOT NULL, label_check TEXT NOT NULL, labeller TEXT NOT NULL,
                passed BOOLEAN NOT NULL, note TEXT NOT NULL, created_at TIMESTAMPTZ NOT NULL,
                stored_at TIMESTAMPTZ NOT NULL DEFAULT now())"""
        )
        conn.execute(
            "INSERT INTO scorewire_label_history (sample_id, output_hash, label_check,"
            " labeller, passed, note, created_at) VALUES ('s1', %s, 'default', 'ana', true,"
            " '', now())",
            (label().output_hash,),
        )
    store = await PostgresLabelStore.open(pg_url)
    try:
        (old,) = await store.lookup("s1", label().output_hash, "default")
        assert (old.labeller, old.tenant) == ("ana", "")
        await store.put([replace(label(passed=False), tenant="checkout")])
        mine = await store.lookup("s1", label().output_hash, "default", tenant="checkout")
        assert [(lb.tenant, lb.passed) for lb in mine] == [("checkout", False)]
    finally:
        await store.close()


async def test_a_put_blocked_past_its_timeout_stored_nothing_when_it_says_so(pg_url) -> None:
    # Another session holds the table locked past statement_timeout: the put fails
    # before its COMMIT, says "nothing was stored", and indeed nothing was; a retry
    # with its request id then stores the label once.
    store = await PostgresLabelStore.open(pg_url)
    srv = await start_label_server(store)
    request = lpb.PutLabelsRequest(
        labels=[json_format.ParseDict({"sampleId": "s1", "outputHash": label().output_hash,
                                       "passed": True, "labeller": "ana"}, lpb.Label())],
        request_id="blocked-1",
    )  # fmt: skip
    try:
        await store.list_labels(LabelQuery(), after_id=0, limit=1)  # the schema exists
        locker = await psycopg.AsyncConnection.connect(pg_url)
        async with locker, locker.transaction():
            await locker.execute("LOCK TABLE scorewire_label_puts IN EXCLUSIVE MODE")
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await srv.labels.PutLabels(request, timeout=30)
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "nothing was stored" in (err.value.details() or "")
        history = LabelQuery(include_history=True)
        for _ in range(100):  # the store fails fast for FAIL_FAST_S after a failure
            try:
                assert await store.list_labels(history, after_id=0, limit=9) == []
                break
            except LabelsUnavailable:
                await asyncio.sleep(0.05)
        else:
            pytest.fail("the store did not answer again after the lock was released")
        for _ in range(2):
            await srv.labels.PutLabels(request, timeout=30)
        assert len(await store.list_labels(history, after_id=0, limit=9)) == 1
    finally:
        await srv.channel.close()
        await srv.stop()
        await store.close()
