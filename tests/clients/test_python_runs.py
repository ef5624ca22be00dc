"""The Python client's recording options and RunService calls, against a real server.

Each test names its runs uniquely, so tests sharing one server never see each other's.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
from scorewire.client import AsyncClient, Client, ScorewireError, runs_pb

CHECKS = [{"name": "has_paris", "type": "contains", "params": {"needles": ["Paris"]}}]


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


@pytest.fixture
async def aclient(scorewire_addr: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(scorewire_addr) as c:
        yield c


def cases(*texts: str) -> list[dict[str, object]]:
    return [{"sample": {"id": f"s{i}"}, "output": t} for i, t in enumerate(texts)]


def test_a_recorded_run_is_listed_read_compared_and_deleted(client: Client) -> None:
    name = f"py-{uuid.uuid4()}"
    base = client.run_suite(
        cases("Paris", "Lyon"), checks=CHECKS, record=True, run_name=name, labels={"k": "v"}
    )
    _, base_summary = base.collect()
    assert base_summary.run_id
    run = client.get_run(base_summary.run_id)
    assert (run.name, dict(run.labels), run.status) == (
        name,
        {"k": "v"},
        runs_pb.RUN_STATUS_COMPLETE,
    )
    failed = client.list_run_results(run.run_id, check="has_paris", outcome="failed")
    assert [r.result.sample_id for r in failed.results] == ["s1"]
    now = client.run_suite(
        cases("Berlin", "Paris"),
        checks=CHECKS,
        record=True,
        run_name=name,
        gate={"baseline": base_summary.run_id},
    )
    _, summary = now.collect()
    assert not summary.gate_passed and any("s0 (has_paris)" in r for r in summary.gate_reasons)
    listed = client.list_runs(name=name, status="complete")
    assert [r.run_id for r in listed.runs] == [summary.run_id, base_summary.run_id]
    cmp = client.compare_runs(base_summary.run_id, summary.run_id)
    assert [c.sample_id for c in cmp.regressed] == ["s0"]
    assert [c.sample_id for c in cmp.improved] == ["s1"]
    client.delete_run(summary.run_id)
    with pytest.raises(ScorewireError) as err:
        client.get_run(summary.run_id)
    assert err.value.code.name == "NOT_FOUND"


def test_an_unknown_outcome_name_is_refused_before_sending(client: Client) -> None:
    with pytest.raises(ValueError, match="outcome must be one of"):
        client.list_run_results("run_x", outcome="broken")


async def test_the_async_client_records_a_score_stream(aclient: AsyncClient) -> None:
    name = f"py-{uuid.uuid4()}"
    stream = aclient.score_stream(
        [("r0", {"id": "s0"}, "Paris"), ("r1", {"id": "s1"}, "Lyon")],
        checks=CHECKS,
        record=True,
        run_name=name,
    )
    assert len([r async for r in stream]) == 2
    runs = (await aclient.list_runs(name=name)).runs
    assert len(runs) == 1 and runs[0].source == "ScoreStream" and runs[0].results == 2
    assert runs[0].status == runs_pb.RUN_STATUS_COMPLETE
    page = await aclient.list_run_results(runs[0].run_id, outcome="passed")
    assert [r.result.sample_id for r in page.results] == ["s0"]
