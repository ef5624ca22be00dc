"""The Python client's LabelService calls (put_labels, list_labels) against a real server.

Each test labels its own fresh sample ids, so tests sharing one server never see each
other's labels.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import uuid
from collections.abc import AsyncIterator, Iterator

import grpc
import pytest
from scorewire.client import (
    AsyncClient,
    Client,
    ScorewireError,
    _channel,
    _labels,
    labels_pb,
    output_hash,
)


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


@pytest.fixture
async def aclient(scorewire_addr: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(scorewire_addr) as c:
        yield c


def fresh_sample() -> str:
    return f"py-labels-{uuid.uuid4()}"


# --- no server: conversion ------------------------------------------------------------------


def test_output_hash_is_sha256_of_exact_utf8_bytes() -> None:
    # No trimming or normalization: a trailing newline is another output.
    assert output_hash("Paris") == hashlib.sha256(b"Paris").hexdigest()
    assert output_hash("Paris\n") != output_hash("Paris")
    assert output_hash("é") == hashlib.sha256("é".encode()).hexdigest()


def test_label_output_text_stands_in_for_output_hash() -> None:
    label = _labels.to_label({"sample_id": "s", "output": "Paris", "passed": True})
    assert label.output_hash == output_hash("Paris")
    assert label.passed


def test_label_unknown_key_and_both_hash_forms_are_refused() -> None:
    with pytest.raises(TypeError, match="passd"):
        _labels.to_label({"sample_id": "s", "passd": True})
    with pytest.raises(TypeError, match="not both"):
        _labels.to_label({"sample_id": "s", "output": "a", "output_hash": "b"})


def test_label_naive_datetime_is_refused_aware_one_kept() -> None:
    with pytest.raises(TypeError, match="timezone-aware"):
        _labels.to_label({"sample_id": "s", "created_at": dt.datetime(2026, 1, 1)})
    when = dt.datetime(2026, 1, 1, 12, tzinfo=dt.timezone(dt.timedelta(hours=2)))
    label = _labels.to_label({"sample_id": "s", "created_at": when})
    assert label.created_at.ToDatetime(dt.UTC) == when


def test_each_put_request_gets_a_fresh_request_id_unless_given() -> None:
    first = _labels.put_request([{"sample_id": "s"}], None).request_id
    second = _labels.put_request([{"sample_id": "s"}], None).request_id
    assert first and second and first != second
    assert _labels.put_request([{"sample_id": "s"}], "mine-1").request_id == "mine-1"


def test_service_config_retries_put_labels_and_scoring_on_unavailable_only() -> None:
    # PutLabels (same request_id) and every scoring call but ScoreStream (issue 16: a
    # lost replica's calls go to the others); nothing else, no other code.
    config = json.loads(_channel.service_config())
    labels, scoring = config["methodConfig"]
    assert labels["name"] == [{"service": "scorewire.v1.LabelService", "method": "PutLabels"}]
    assert [n["method"] for n in scoring["name"]] == [
        "Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite"
    ]  # fmt: skip
    assert {n["service"] for n in scoring["name"]} == {"scorewire.v1.ScoringService"}
    for method in (labels, scoring):
        assert method["retryPolicy"]["retryableStatusCodes"] == ["UNAVAILABLE"]


# --- against the server ---------------------------------------------------------------------


def test_put_then_list_returns_the_label_as_stored(client: Client) -> None:
    sample = fresh_sample()
    resp = client.put_labels(
        [{"sample_id": sample, "output": "Paris", "passed": True, "labeller": "ann"}]
    )
    (stored,) = resp.labels
    assert stored.check == "default"  # filled in by the server
    assert stored.created_at.seconds > 0
    page = client.list_labels(sample_id=sample)
    assert [(lb.output_hash, lb.passed, lb.labeller) for lb in page.labels] == [
        (output_hash("Paris"), True, "ann")
    ]
    assert page.next_page_token == ""


def test_same_request_id_stores_once_fresh_ids_store_each_call(client: Client) -> None:
    sample = fresh_sample()
    label = {"sample_id": sample, "output": "Paris", "passed": True, "labeller": "ann"}
    client.put_labels([label], request_id="retry-" + sample[-12:])
    client.put_labels([label], request_id="retry-" + sample[-12:])  # a retry: no new label
    assert len(client.list_labels(sample_id=sample, include_history=True).labels) == 1
    client.put_labels([label])
    client.put_labels([label])  # a fresh id per call: both are stored
    assert len(client.list_labels(sample_id=sample, include_history=True).labels) == 3


def test_request_id_reused_for_other_labels_is_invalid_argument(client: Client) -> None:
    sample = fresh_sample()
    rid = "reuse-" + sample[-12:]
    client.put_labels([{"sample_id": sample, "output": "a", "labeller": "ann"}], request_id=rid)
    with pytest.raises(ScorewireError) as info:
        client.put_labels([{"sample_id": sample, "output": "b", "labeller": "ann"}], request_id=rid)
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "request_id" in {v.field for v in info.value.field_violations}


def test_missing_labeller_names_the_field(client: Client) -> None:
    with pytest.raises(ScorewireError) as info:
        client.put_labels([{"sample_id": fresh_sample(), "output": "a"}])
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "labels[0].labeller" in {v.field for v in info.value.field_violations}


def test_list_labels_pages_with_next_page_token(client: Client) -> None:
    sample = fresh_sample()
    client.put_labels(
        [{"sample_id": sample, "output": f"out {i}", "labeller": "ann"} for i in range(3)]
    )
    first = client.list_labels(sample_id=sample, page_size=2)
    assert len(first.labels) == 2 and first.next_page_token
    second = client.list_labels(sample_id=sample, page_size=2, page_token=first.next_page_token)
    assert len(second.labels) == 1 and second.next_page_token == ""
    hashes = {lb.output_hash for lb in [*first.labels, *second.labels]}
    assert hashes == {output_hash(f"out {i}") for i in range(3)}


def test_label_message_passes_through_unchanged(client: Client) -> None:
    sample = fresh_sample()
    label = labels_pb.Label(
        sample_id=sample, output_hash=output_hash("x"), passed=False, labeller="bob", check="tone"
    )
    client.put_labels([label])
    (got,) = client.list_labels(sample_id=sample, check="tone").labels
    assert (got.labeller, got.check, got.passed) == ("bob", "tone", False)


async def test_async_put_and_list(aclient: AsyncClient) -> None:
    sample = fresh_sample()
    await aclient.put_labels([{"sample_id": sample, "output": "a", "labeller": "ann"}])
    page = await aclient.list_labels(sample_id=sample)
    assert [lb.output_hash for lb in page.labels] == [output_hash("a")]


async def test_async_error_names_the_field(aclient: AsyncClient) -> None:
    with pytest.raises(ScorewireError) as info:
        await aclient.put_labels([{"sample_id": fresh_sample(), "output_hash": "nothex"}])
    fields = {v.field for v in info.value.field_violations}
    assert "labels[0].output_hash" in fields
