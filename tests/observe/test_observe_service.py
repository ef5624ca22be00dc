"""Observe over gRPC: acknowledged means durably queued; bad input and a full queue refused."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from scorewire.observe.queue import SqliteQueue
from scorewire.observe.rules import parse_rules
from scorewire.v1 import observe_pb2 as opb

from tests.observe.servers import observation, observe_server
from tests.support.rpc import bad_request

TRACE = "0af7651916cd43dd8448eb211c80319c"


def _queue(tmp_path: Path, max_depth: int = 100) -> SqliteQueue:
    return SqliteQueue(tmp_path / "observe.db", max_depth=max_depth)


async def test_an_acknowledged_batch_is_in_the_queue_file(tmp_path: Path) -> None:
    # the answer comes after the commit: a queue opened afresh on the file holds them
    async with observe_server(_queue(tmp_path), consume=False) as srv:
        answer = await srv.observe.Observe(
            opb.ObserveRequest(observations=[observation("Paris", oid="x1"), observation("Lyon")])
        )
    assert [(a.index, a.status) for a in answer.acks] == [
        (0, opb.OBSERVATION_STATUS_QUEUED),
        (1, opb.OBSERVATION_STATUS_QUEUED),
    ]
    assert answer.acks[0].observation_id == "x1"
    assert answer.acks[1].observation_id.startswith("o_")
    again = _queue(tmp_path)
    await again.start()
    taken = await again.take(10)
    await again.close()
    assert [d.id for d in taken] == ["x1", answer.acks[1].observation_id]
    stored = opb.Observation.FromString(taken[0].payload)
    assert stored.output.text == "Paris" and stored.observed_at.seconds > 0


async def test_a_resent_batch_is_answered_duplicate(tmp_path: Path) -> None:
    # a caller retrying after a lost answer queues nothing twice (derived ids included)
    request = opb.ObserveRequest(observations=[observation("Paris", trace=TRACE)])
    async with observe_server(_queue(tmp_path), consume=False) as srv:
        first = await srv.observe.Observe(request)
        second = await srv.observe.Observe(request)
        assert srv.metric("scorewire_observe_queued_total", status="duplicate") == 1
    assert first.acks[0].observation_id == second.acks[0].observation_id
    assert second.acks[0].status == opb.OBSERVATION_STATUS_DUPLICATE


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda o: setattr(o.trace, "trace_id", "XYZ"), "observations[1].trace.trace_id"),
        (lambda o: setattr(o.trace, "span_id", "123"), "observations[1].trace.span_id"),
        (lambda o: setattr(o, "observation_id", "x" * 129), "observations[1].observation_id"),
        (lambda o: setattr(o.metadata, "route", "r" * 257), "observations[1].metadata.route"),
        (lambda o: setattr(o.sample, "input_json", "{nope"), "observations[1].sample.input_json"),
    ],
)
async def test_bad_input_is_invalid_argument_naming_the_field(
    tmp_path: Path, mutate, field: str
) -> None:
    # nothing of the batch is queued
    bad = observation("Lyon")
    mutate(bad)
    queue = _queue(tmp_path)
    async with observe_server(queue, consume=False) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(opb.ObserveRequest(observations=[observation("Paris"), bad]))
        assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert list(bad_request(err.value)) == [field]
        assert await queue.depth() == 0


async def test_an_empty_batch_is_invalid_argument(tmp_path: Path) -> None:
    # a batch carries 1 to 1,000 observations
    async with observe_server(_queue(tmp_path), consume=False) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(opb.ObserveRequest())
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert list(bad_request(err.value)) == ["observations"]


async def test_a_full_queue_is_resource_exhausted_never_a_silent_drop(tmp_path: Path) -> None:
    # the batch that does not fit is refused whole, naming the setting
    queue = _queue(tmp_path, max_depth=2)
    async with observe_server(queue, consume=False) as srv:
        await srv.observe.Observe(opb.ObserveRequest(observations=[observation("a")]))
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(
                opb.ObserveRequest(observations=[observation("b"), observation("c")])
            )
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "SCOREWIRE_OBSERVE_QUEUE_MAX" in err.value.details()
        assert await queue.depth() == 1


async def test_list_rules_serves_the_rules_as_loaded(tmp_path: Path) -> None:
    # checks as CheckSpec messages, in file order
    rules = parse_rules(
        {
            "rules": [
                {
                    "name": "paris",
                    "checks": [{"type": "contains", "needles": ["Paris"]}],
                    "compact": ["length:1..50"],
                    "filter": {"route": "/c"},
                    "sampling_rate": 0.5,
                    "settle_delay_s": 1.5,
                },
                {"name": "all", "compact": ["contains:x"]},
            ]
        }
    )
    async with observe_server(_queue(tmp_path), rules, consume=False) as srv:
        answer = await srv.observe.ListRules(opb.ListRulesRequest())
    first, second = answer.rules
    assert (first.name, first.sampling_rate, first.settle_delay_s) == ("paris", 0.5, 1.5)
    assert first.checks[0].type == "contains"
    assert list(first.checks[0].params["needles"]) == ["Paris"]
    assert (list(first.compact), dict(first.filter)) == (["length:1..50"], {"route": "/c"})
    assert (second.name, second.sampling_rate) == ("all", 1.0)


async def test_with_no_rules_observe_is_refused_rather_than_dropped(tmp_path: Path) -> None:
    # an acknowledged observation no rule can score would be taken and dropped
    queue = _queue(tmp_path)
    async with observe_server(queue, (), consume=False) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await srv.observe.Observe(opb.ObserveRequest(observations=[observation("Paris")]))
    assert err.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "SCOREWIRE_OBSERVE_RULES_FILE" in (err.value.details() or "")
