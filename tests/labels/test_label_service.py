"""LabelService over a real channel, and the `human` check reading the store in a server."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import json_format, timestamp_pb2
from scorewire.labels.label_model import output_hash
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as spb

from tests.labels.conftest import LabelServer, start_label_server
from tests.support.rpc import bad_request

HASH = output_hash("Paris")


def pb_label(**fields) -> lpb.Label:
    base = {"sampleId": "s1", "outputHash": HASH, "passed": True, "labeller": "ana"}
    return json_format.ParseDict(base | fields, lpb.Label())


def score_request(*checks, sample_id="s1", text="Paris") -> spb.ScoreRequest:
    return json_format.ParseDict(
        {"sample": {"id": sample_id}, "output": {"text": text}, "checks": list(checks)},
        spb.ScoreRequest(),
    )


async def put(srv: LabelServer, *labels: lpb.Label) -> lpb.PutLabelsResponse:
    return await srv.labels.PutLabels(lpb.PutLabelsRequest(labels=labels))


async def test_put_fills_in_check_and_time_and_list_returns_it(label_server) -> None:
    # Empty check means `default`; unset created_at is the server's receive time.
    resp = await put(label_server, pb_label(note="fine"))
    (stored,) = resp.labels
    assert stored.check == "default" and stored.created_at.seconds > 0
    listed = await label_server.labels.ListLabels(lpb.ListLabelsRequest(sample_id="s1"))
    assert list(listed.labels) == [stored]


async def test_latest_label_counts_and_history_is_kept(label_server) -> None:
    # Two labels by one labeller: listing shows the latest; include_history shows both.
    await put(label_server, pb_label(passed=False, createdAt="2025-01-01T00:00:00Z"))
    await put(label_server, pb_label(passed=True, createdAt="2025-01-02T00:00:00Z"))
    latest = await label_server.labels.ListLabels(lpb.ListLabelsRequest())
    assert [lb.passed for lb in latest.labels] == [True]
    history = await label_server.labels.ListLabels(lpb.ListLabelsRequest(include_history=True))
    assert [lb.passed for lb in history.labels] == [False, True]


# (label fields, the violated field path)
BAD_LABELS = [
    # a sample id is required
    ({"sampleId": ""}, "labels[0].sample_id"),
    # the hash must be a SHA-256 hex digest
    ({"outputHash": "abc"}, "labels[0].output_hash"),
    # upper-case hex is not the canonical form
    ({"outputHash": HASH.upper()}, "labels[0].output_hash"),
    # a labeller is required
    ({"labeller": ""}, "labels[0].labeller"),
    # NUL characters cannot be stored (PostgreSQL text)
    ({"note": "a\u0000b"}, "labels[0].note"),
    # a check name over 256 characters
    ({"check": "c" * 257}, "labels[0].check"),
    # a label from the future (beyond clock skew)
    ({"createdAt": "2999-01-01T00:00:00Z"}, "labels[0].created_at"),
]


@pytest.mark.parametrize(("fields", "path"), BAD_LABELS)
async def test_bad_label_is_invalid_argument_naming_the_field(label_server, fields, path) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await put(label_server, pb_label(**fields))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert path in bad_request(err.value)


async def test_one_bad_label_stores_none_of_the_request(label_server) -> None:
    # All or none: the good label of a rejected request is not stored.
    with pytest.raises(grpc.aio.AioRpcError):
        await put(label_server, pb_label(), pb_label(sampleId=""))
    listed = await label_server.labels.ListLabels(lpb.ListLabelsRequest())
    assert list(listed.labels) == []


async def test_invalid_timestamp_is_invalid_argument(label_server) -> None:
    bad = pb_label()
    bad.created_at.CopyFrom(timestamp_pb2.Timestamp(seconds=1, nanos=-5))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await put(label_server, bad)
    assert "labels[0].created_at" in bad_request(err.value)


async def test_empty_and_oversized_puts_are_rejected(label_server) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await put(label_server)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await put(label_server, *[pb_label(sampleId=f"s{i}") for i in range(1001)])
    assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_list_pages_through_every_label_once(label_server) -> None:
    await put(label_server, *[pb_label(sampleId=f"s{i:02}") for i in range(7)])
    seen, token = [], ""
    while True:
        page = await label_server.labels.ListLabels(
            lpb.ListLabelsRequest(page_size=3, page_token=token)
        )
        seen += [lb.sample_id for lb in page.labels]
        token = page.next_page_token
        if not token:
            break
    assert seen == [f"s{i:02}" for i in range(7)]


# (request fields, the violated field path)
BAD_LISTS = [
    # a page token from nowhere
    ({"pageToken": "garbage!"}, "page_token"),
    # a negative page size
    ({"pageSize": -1}, "page_size"),
    # a malformed hash filter
    ({"outputHash": "xyz"}, "output_hash"),
]


@pytest.mark.parametrize(("fields", "path"), BAD_LISTS)
async def test_bad_list_request_is_invalid_argument(label_server, fields, path) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await label_server.labels.ListLabels(json_format.ParseDict(fields, lpb.ListLabelsRequest()))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert path in bad_request(err.value)


async def test_page_token_of_other_filters_is_rejected(label_server) -> None:
    await put(label_server, *[pb_label(sampleId=f"s{i}") for i in range(3)])
    page = await label_server.labels.ListLabels(lpb.ListLabelsRequest(page_size=1))
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await label_server.labels.ListLabels(
            lpb.ListLabelsRequest(page_size=1, page_token=page.next_page_token, labeller="bo")
        )
    assert "page_token" in bad_request(err.value)


# ---- the human check in the server --------------------------------------------------------


async def test_human_check_reads_the_store_through_score(label_server) -> None:
    # Default labels: in a server-backed run is the service's store; center too.
    await put(label_server, pb_label(), pb_label(check="tone", passed=False, note="curt"))
    resp = await label_server.scoring.Score(
        score_request(
            {"type": "human"},
            {"name": "tone", "type": "human", "params": {"labels": "center", "check": "tone"}},
        )
    )
    assert [(s.passed, s.error.code) for s in resp.scores] == [(True, ""), (False, "")]
    assert "curt" in resp.scores[1].reason


async def test_human_check_fails_an_unlabelled_output(label_server) -> None:
    await put(label_server, pb_label())
    resp = await label_server.scoring.Score(score_request({"type": "human"}, text="Lyon"))
    (got,) = resp.scores
    assert not got.passed and not got.HasField("error")
    assert got.reason == "no label for this output"


async def test_human_check_in_run_suite_counts_store_errors(label_server, sqlite_store) -> None:
    # A store that stopped answering: error scores, counted in the summary, never passes.
    await put(label_server, pb_label())
    await sqlite_store.close()
    request = json_format.ParseDict(
        {
            "checks": [{"type": "human"}],
            "cases": [{"sample": {"id": "s1"}, "output": {"text": "Paris"}}],
            "gate": {"maxErrorRate": 0.0},
        },
        spb.RunSuiteRequest(),
    )
    results, summary = [], None
    async for event in label_server.scoring.RunSuite(request):
        if event.HasField("results"):
            results += list(event.results.results)
        else:
            summary = event.summary
    (case,) = results
    assert case.scores[0].error.code == "LABELS_UNAVAILABLE" and not case.passed
    assert summary is not None and summary.errored == 1 and not summary.gate_passed


async def test_stopped_store_makes_put_and_list_unavailable(label_server, sqlite_store) -> None:
    await sqlite_store.close()
    for call in (
        lambda: put(label_server, pb_label()),
        lambda: label_server.labels.ListLabels(lpb.ListLabelsRequest()),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await call()
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "sqlite" not in (err.value.details() or "").lower()  # no internals leak


async def test_labels_survive_a_server_restart(tmp_path) -> None:
    # Acknowledged labels are in the SQLite file: a new server on it serves them.
    path = str(tmp_path / "labels.db")
    store = await SqliteLabelStore.open(path)
    srv = await start_label_server(store)
    await put(srv, pb_label(), pb_label(sampleId="s2", passed=False))
    await srv.channel.close()
    await srv.stop()
    await store.close()

    store = await SqliteLabelStore.open(path)
    srv = await start_label_server(store)
    try:
        listed = await srv.labels.ListLabels(lpb.ListLabelsRequest())
        assert [(lb.sample_id, lb.passed) for lb in listed.labels] == [("s1", True), ("s2", False)]
        resp = await srv.scoring.Score(score_request({"type": "human"}))
        assert resp.scores[0].passed
    finally:
        await srv.channel.close()
        await srv.stop()
        await store.close()
