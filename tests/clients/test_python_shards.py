"""`run_suite(..., shards=N)`: one batch as chunks, summaries merged by counts and sums.

Against the real server: the merged summary of a sharded run equals the summary of the
same batch run as one call (counts exactly, means to rounding), its gate judged again
on the merged totals; indexes refer to the caller's list.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import grpc
import pytest
from scorewire.client import AsyncClient, Client, ScorewireError, pb, runs_pb
from scorewire.client._channel import addresses_target
from scorewire.client._shards import retryable, split
from scorewire.client._summary import gate_reasons, merge_summaries

from tests.support.checkllm import PROVIDERS, SUITE


@pytest.fixture
def client(scorewire_addr: str) -> Iterator[Client]:
    with Client(scorewire_addr) as c:
        yield c


CHECKS = [
    {"type": "exact", "name": "same"},  # an error without `expected`
    {"type": "rouge_l", "name": "overlap"},  # fractional values
    {"type": "contains", "needles": ["Rome"], "when": {"type": "contains", "needles": ["Rom"]}},
]


def _cases(n: int) -> list[dict[str, object]]:
    """Passing, failing, erroring and skipped scores, unevenly spread over the list."""
    out = []
    for i in range(n):
        kind = i % 7
        sample: dict[str, object] = {"id": f"c{i}"}
        if kind in (0, 1, 2):
            sample["expected"] = "Paris is the capital"
            text = "Paris is the capital" if kind == 0 else "Paris is a city in France"
        elif kind in (3, 4):
            sample["expected"] = "Rome"
            text = "Roma" if kind == 3 else "Rome"
        else:
            text = "no expected value here"  # `exact` and `rouge_l` error
        out.append({"sample": sample, "output": text})
    return out


def _totals(s: pb.RunSummary) -> tuple[object, ...]:
    return (
        s.cases, s.cases_passed, s.passed, s.failed, s.errored, s.skipped,
        [(c.name, c.passed, c.failed, c.errored, c.skipped, c.cached) for c in s.checks],
    )  # fmt: skip


def _means(s: pb.RunSummary) -> list[float]:
    return [s.pass_rate, s.mean_score, s.error_rate, s.value_sum, s.cost_usd] + [
        x for c in s.checks for x in (c.mean_value, c.value_sum)
    ]


@pytest.mark.parametrize(("shards", "chunk_cases"), [(1, 5_000), (3, 10), (4, 1), (3, 97)])
@pytest.mark.parametrize(
    "gate",
    [
        {"max_error_rate": 0.5},  # passes: 54 of 222 applied scores error
        {"max_error_rate": 0.5, "min_pass_rate": 0.3},  # fails: 28 of 97 cases pass
        {"max_error_rate": 1, "min_mean_score": 0.4, "max_cost_usd": 1},  # fails: 0.366
    ],
)
def test_a_sharded_summary_is_the_unsharded_one(
    client: Client, shards: int, chunk_cases: int, gate: dict[str, float]
) -> None:
    # The same 97 cases in one call and in chunks: same totals, same gate verdict.
    cases = _cases(97)
    whole = client.run_suite(cases, checks=CHECKS, gate=gate).collect()
    run = client.run_suite(cases, checks=CHECKS, gate=gate, shards=shards, chunk_cases=chunk_cases)
    results, merged = run.collect()
    one = whole[1]
    assert _totals(merged) == _totals(one)
    assert _means(merged) == pytest.approx(_means(one), rel=1e-12, abs=1e-15)
    assert (merged.gate_passed, list(merged.gate_reasons)) == (
        one.gate_passed,
        list(one.gate_reasons),
    )
    assert merged.gate == one.gate
    by_index = {r.index: r for r in whole[0]}
    assert sorted(r.index for r in results) == list(range(97))
    for r in results:  # each index names the caller's case, scored as in the whole run
        assert r.sample_id == f"c{r.index}"
        assert [s.value for s in r.scores] == [s.value for s in by_index[r.index].scores]


async def test_the_asyncio_client_shards_the_same_way(scorewire_addr: str) -> None:
    # AsyncClient.run_suite(shards=3): the same merged totals, each case once.
    gate = {"max_error_rate": 0.5, "min_pass_rate": 0.3}
    async with AsyncClient(scorewire_addr) as client:
        whole = client.run_suite(_cases(97), checks=CHECKS, gate=gate)
        one = [r async for r in whole], whole.summary
        run = client.run_suite(_cases(97), checks=CHECKS, gate=gate, shards=3, chunk_cases=10)
        results, merged = await run.collect()  # type: ignore[misc]
    assert _totals(merged) == _totals(one[1])
    assert _means(merged) == pytest.approx(_means(one[1]), rel=1e-12, abs=1e-15)
    assert list(merged.gate_reasons) == list(one[1].gate_reasons) and not merged.gate_passed
    assert sorted(r.index for r in results) == list(range(97))


def test_the_gate_is_judged_on_the_merged_totals_not_per_shard(client: Client) -> None:
    # The first half passes, the second fails: every shard's own verdict is wrong for
    # the batch; the merged summary's is the batch's (pass rate exactly 0.5).
    cases = [
        {"sample": {"id": f"c{i}"}, "output": "Paris" if i < 10 else "Rome"} for i in range(20)
    ]
    gate = {"min_pass_rate": 0.5}
    run = client.run_suite(cases, compact=["contains:Paris"], gate=gate, shards=2, chunk_cases=10)
    _, merged = run.collect()
    assert merged.pass_rate == 0.5 and merged.gate_passed
    halves = [
        client.run_suite(cases[:10], compact=["contains:Paris"], gate=gate).collect()[1],
        client.run_suite(cases[10:], compact=["contains:Paris"], gate=gate).collect()[1],
    ]
    assert [h.gate_passed for h in halves] == [True, False]
    assert merge_summaries(halves) == merged
    gate_strict = client.run_suite(
        cases, compact=["contains:Paris"], gate={"min_pass_rate": 0.6}, shards=2, chunk_cases=10
    ).collect()[1]
    assert gate_strict.gate_reasons == ["pass rate 0.5 is below min_pass_rate 0.6"]


def test_a_batch_with_no_cases_meets_no_min_threshold(client: Client) -> None:
    # The server's rule: nothing ran, so nothing passed a min_* threshold.
    one = client.run_suite([], compact=["contains:x"], gate={"min_pass_rate": 0}).collect()[1]
    merged = merge_summaries([one])
    assert not one.gate_passed and list(merged.gate_reasons) == list(one.gate_reasons)
    assert gate_reasons(one.gate, one) == list(one.gate_reasons)


def _checkllm_part(
    cases: int, passed: int, cost: float, cells: list[tuple[int, str, int, int, float]]
) -> pb.RunSummary:
    """A checkllm shard's summary: generation totals and (prompt, provider) cells."""
    part = pb.RunSummary(
        cases=cases, cases_passed=passed, passed=passed, failed=cases - passed,
        generation_cost_usd=cost, generation_calls=cases, generation_cached=1,
        run_id=f"run-{cases}", gate=pb.Gate(max_error_rate=0),
    )  # fmt: skip
    for prompt, provider, n, ok, spent in cells:
        part.matrix.add(
            prompt=prompt, provider=provider, cases=n, cases_passed=ok,
            cases_errored=n - ok, pass_rate=ok / n, generation_cost_usd=spent,
        )  # fmt: skip
    return part


def test_one_summary_is_kept_as_the_server_sent_it() -> None:
    # A suite document with its own cases runs as one chunk: its generation totals,
    # matrix and run id are the server's, and so is its gate verdict (a checkllm
    # suite's default gate is not the client's rule, which would pass this summary).
    one = _checkllm_part(4, 3, 0.25, [(0, "openai:a", 2, 2, 0.1), (0, "anthropic:b", 2, 1, 0.15)])
    one.generation_unpriced = True
    one.gate_reasons.append("test 1 failed")
    assert gate_reasons(one.gate, one) == []
    assert merge_summaries([one]) == one


def test_generation_totals_and_the_matrix_merge_cell_by_cell() -> None:
    a = _checkllm_part(4, 3, 0.25, [(0, "openai:a", 2, 2, 0.1), (0, "anthropic:b", 2, 1, 0.15)])
    b = _checkllm_part(3, 1, 0.5, [(0, "anthropic:b", 1, 0, 0.2), (1, "openai:a", 2, 1, 0.3)])
    b.generation_unpriced = True
    merged = merge_summaries([a, b])
    assert merged.generation_cost_usd == pytest.approx(0.75)
    assert (merged.generation_calls, merged.generation_cached) == (7, 2)
    assert merged.generation_unpriced
    cells = [
        (c.prompt, c.provider, c.cases, c.cases_passed, c.cases_errored) for c in merged.matrix
    ]
    want = [(0, "openai:a", 2, 2, 0), (0, "anthropic:b", 3, 1, 2), (1, "openai:a", 2, 1, 1)]
    assert cells == want
    assert [c.pass_rate for c in merged.matrix] == pytest.approx([1.0, 1 / 3, 0.5])
    assert [c.generation_cost_usd for c in merged.matrix] == pytest.approx([0.1, 0.35, 0.3])
    assert merged.run_id == ""  # each chunk was a run of its own


def test_a_recorded_run_sent_as_one_chunk_keeps_its_run_id(client: Client) -> None:
    cases = _cases(5)
    run = client.run_suite(cases, compact=["contains:Paris"], record=True, shards=1)
    one = run.collect()[1]
    assert one.run_id and client.get_run(one.run_id).summary.cases == 5
    assert run.run_ids == [one.run_id]
    unrecorded = client.run_suite(cases, compact=["contains:Paris"], record=False, shards=2)
    unrecorded.collect()
    assert unrecorded.run_ids == []
    client.delete_run(one.run_id)


async def test_the_asyncio_client_records_a_sharded_run_as_one_run_too(
    scorewire_addr: str,
) -> None:
    cases = [{"sample": {"id": f"c{i}"}, "output": "Paris" if i < 2 else "Rome"} for i in range(4)]
    async with AsyncClient(scorewire_addr) as client:
        run = client.run_suite(
            cases, compact=["contains:Paris"], record=True, shards=2, chunk_cases=2
        )
        merged = (await run.collect())[1]  # type: ignore[misc]
        assert run.run_ids == [merged.run_id]  # type: ignore[union-attr]
        one = await client.get_run(merged.run_id)
        await client.delete_run(merged.run_id)
    assert (one.status, one.results, one.summary.cases_passed) == (
        runs_pb.RUN_STATUS_COMPLETE, 4, 2,
    )  # fmt: skip


def test_a_recorded_sharded_run_is_one_run_with_every_case_at_its_index(client: Client) -> None:
    # Three chunks of three: all pass, none pass, one passes. One run holds them all, its
    # summary the merged one (gate included), its results at the caller's indexes.
    outputs = ["Paris"] * 3 + ["Rome"] * 3 + ["Paris", "Rome", "Rome"]
    cases = [{"sample": {"id": f"c{i}"}, "output": t} for i, t in enumerate(outputs)]
    name = f"sharded-{uuid.uuid4().hex[:8]}"
    run = client.run_suite(
        cases, compact=["contains:Paris"], record=True, run_name=name, labels={"k": "v"},
        shards=3, chunk_cases=3,
    )  # fmt: skip
    merged = run.collect()[1]
    assert merged.run_id and run.run_ids == [merged.run_id]
    assert [r.run_id for r in client.list_runs(name=name).runs] == [merged.run_id]
    one = client.get_run(merged.run_id)
    assert (one.status, one.results, dict(one.labels)) == (
        runs_pb.RUN_STATUS_COMPLETE, 9, {"k": "v"},
    )  # fmt: skip
    assert (one.summary.cases, one.summary.cases_passed) == (9, 4)
    assert one.summary.gate_passed == merged.gate_passed
    stored = client.list_run_results(merged.run_id, page_size=100).results
    assert sorted((r.result.index, r.result.sample_id) for r in stored) == [
        (i, f"c{i}") for i in range(9)
    ]
    client.delete_run(merged.run_id)


def test_a_sharded_run_that_fails_is_recorded_once_as_incomplete(client: Client) -> None:
    # A chunk refused (a parameter misspelt) fails the run: it is closed as interrupted.
    name = f"sharded-failed-{uuid.uuid4().hex[:8]}"
    run = client.run_suite(
        _cases(9), checks=[{"type": "output_length", "params": {"maximun": 5}}],
        record=True, run_name=name, shards=3, chunk_cases=3,
    )  # fmt: skip
    with pytest.raises(ScorewireError):
        run.collect()
    runs = client.list_runs(name=name).runs
    assert [r.status for r in runs] == [runs_pb.RUN_STATUS_INCOMPLETE]
    client.delete_run(runs[0].run_id)


def test_a_run_sent_in_parts_through_the_public_calls(client: Client) -> None:
    # open_run, run_suite(part=...) twice, close_run: one run, the caller's summary.
    run_id = client.open_run(run_name="in-parts", record=True)
    first = client.run_suite([({"id": "a"}, "Paris")], compact=["contains:Paris"], part=(run_id, 0))
    second = client.run_suite(
        [({"id": "b"}, "Rome")], compact=["contains:Paris"], part=runs_pb_part(run_id, 1)
    )
    merged = merge_summaries([first.collect()[1], second.collect()[1]])
    client.close_run(run_id, merged)
    one = client.get_run(run_id)
    assert (one.status, one.source, one.results) == (runs_pb.RUN_STATUS_COMPLETE, "OpenRun", 2)
    assert (one.summary.cases, one.summary.cases_passed) == (2, 1)
    with pytest.raises(ScorewireError) as err:  # closed once; a second close is refused
        client.close_run(run_id, merged)
    assert err.value.code == grpc.StatusCode.FAILED_PRECONDITION and run_id in err.value.message
    with pytest.raises(ValueError, match="part and shards"):
        client.run_suite([({"id": "a"}, "x")], compact=["contains:x"], part=(run_id, 0), shards=2)
    client.delete_run(run_id)


def runs_pb_part(run_id: str, first_index: int) -> pb.RunPart:
    return pb.RunPart(run_id=run_id, first_index=first_index)


def test_an_invalid_request_fails_the_sharded_run_once_without_retries(client: Client) -> None:
    # INVALID_ARGUMENT is the request's fault: no chunk is sent again.
    run = client.run_suite(
        _cases(20), checks=[{"type": "output_length", "params": {"maximun": 5}}], shards=3
    )
    with pytest.raises(ScorewireError) as err:
        run.collect()
    assert err.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert run.retries == 0


def test_summaries_of_different_checks_do_not_merge(client: Client) -> None:
    a = client.run_suite(_cases(3), compact=["contains:x"]).collect()[1]
    b = client.run_suite(_cases(3), compact=["contains:y"]).collect()[1]
    with pytest.raises(ValueError, match="different checks"):
        merge_summaries([a, b])


def test_chunks_cover_the_cases_in_order_and_share_the_budget() -> None:
    # 10 cases, 3 shards, chunks of at most 3: 4 chunks; budgets add up to the run's.
    base = pb.RunSuiteRequest(compact=["contains:x"], budget_usd=1.0)
    cases = [pb.Case(sample=pb.Sample(id=f"c{i}")) for i in range(10)]
    chunks = split(base, cases, shards=3, chunk_cases=3)
    assert [c.offset for c in chunks] == [0, 3, 6, 9]
    assert [x.sample.id for c in chunks for x in c.request.cases] == [f"c{i}" for i in range(10)]
    assert sum(c.request.budget_usd for c in chunks) == pytest.approx(1.0)
    assert all(list(c.request.compact) == ["contains:x"] for c in chunks)
    assert len(split(base, cases, shards=4, chunk_cases=100)) == 4  # at least `shards`
    with pytest.raises(ValueError, match="shards"):
        split(base, cases, shards=0, chunk_cases=3)


def test_a_checkllm_batch_is_one_chunk() -> None:
    # The server scores recorded combinations only with every one present: a checkllm
    # batch (by its format, or by a case naming its combination) is never split.
    cases = [pb.Case(sample=pb.Sample(id=f"c{i}")) for i in range(10)]
    assert len(split(pb.RunSuiteRequest(), cases, shards=3, chunk_cases=5_000)) == 3
    checkllm = pb.RunSuiteRequest(format=pb.SUITE_FORMAT_CHECKLLM, budget_usd=1.0)
    (whole,) = split(checkllm, cases, shards=3, chunk_cases=2)
    assert len(whole.request.cases) == 10 and whole.request.budget_usd == 1.0
    named = [pb.Case(prompt="1") if i == 7 else c for i, c in enumerate(cases)]
    assert len(split(pb.RunSuiteRequest(), named, shards=3, chunk_cases=5_000)) == 1


def test_a_recorded_checkllm_batch_runs_sharded_as_the_plain_run(client: Client) -> None:
    # Every combination recorded, named in plain dicts; the anthropic answers to the
    # second prompt miss Rome. Sharded, the batch runs whole: the server's summary.
    cases = [
        {
            "test": test,
            "prompt": prompt,
            "provider": provider,
            "output": "Paris" if (prompt, provider[:9]) == ("1", "anthropic") else "Paris Rome",
        }
        for test in ("France", "1")
        for prompt in ("0", "1")
        for provider in PROVIDERS
    ]
    plain = client.run_suite(cases, suite_yaml=SUITE).collect()[1]
    run = client.run_suite(cases, suite_yaml=SUITE, shards=2)
    results, sharded = run.collect()
    assert sharded == plain and len(results) == 8
    assert [(c.prompt, c.cases, c.cases_passed) for c in sharded.matrix] == [
        (0, 2, 2), (0, 2, 2), (1, 2, 2), (1, 2, 1),
    ]  # fmt: skip
    assert sorted(r.combination.test for r in results if not r.passed) == [1]


@pytest.mark.parametrize(
    ("code", "message", "expected"),
    [
        (grpc.StatusCode.UNAVAILABLE, "Socket closed", True),
        (grpc.StatusCode.INTERNAL, "Stream removed (RST_STREAM ... error code 2)", True),  # nginx
        (
            grpc.StatusCode.UNKNOWN,
            "Stream removed (Data frame with END_STREAM ...)",
            True,
        ),  # haproxy
        (grpc.StatusCode.INTERNAL, "internal error", False),  # the server's own fault
        (grpc.StatusCode.INVALID_ARGUMENT, "checks[0]", False),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, "max_cases_per_request", False),
    ],
)
def test_which_failures_send_a_chunk_elsewhere(code, message, expected) -> None:
    assert retryable(ScorewireError(code, message)) is expected


def test_a_list_of_addresses_is_one_round_robin_target() -> None:
    assert addresses_target(["127.0.0.1:1", "127.0.0.1:2"]) == "ipv4:127.0.0.1:1,127.0.0.1:2"
    assert addresses_target(["[::1]:1", "[::1]:2"]) == "ipv6:[::1]:1,[::1]:2"
    with pytest.raises(ValueError, match=r"target\[1\]"):
        addresses_target(["127.0.0.1:1", "replica-b:2"])
    with pytest.raises(ValueError, match="IPv4 and IPv6"):
        addresses_target(["127.0.0.1:1", "[::1]:2"])
