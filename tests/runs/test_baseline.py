"""Baseline gates over gRPC: a run fails its gate when it regresses against a recorded run."""

from __future__ import annotations

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import CHECKS, RunServer, case
from tests.support.rpc import bad_request


def request(*texts: str, record: bool = True, **gate: object) -> pb.RunSuiteRequest:
    req = pb.RunSuiteRequest(
        checks=CHECKS,
        cases=[case(f"s{i}", t) for i, t in enumerate(texts)],
        record=record,
        run_name="nightly",
    )
    for k, v in gate.items():
        setattr(req.gate, k, v)
    return req


async def summary_of(srv: RunServer, req: pb.RunSuiteRequest) -> pb.RunSummary:
    out = pb.RunSummary()
    async for ev in srv.scoring.RunSuite(req):
        if ev.WhichOneof("event") == "summary":
            out = ev.summary
    return out


async def test_a_case_that_passed_in_the_baseline_and_fails_now_fails_the_gate(
    run_server: RunServer,
) -> None:
    base = await summary_of(run_server, request("Paris", "Paris too", "Lyon"))
    now = await summary_of(
        run_server, request("Berlin", "Paris too", "Paris", baseline=base.run_id)
    )
    assert not now.gate_passed
    assert any("s0 (has_paris)" in r and base.run_id in r for r in now.gate_reasons)
    # s2 improved: it is not listed as a regression.
    assert not any("s2" in r for r in now.gate_reasons)


async def test_no_regression_passes_the_gate(run_server: RunServer) -> None:
    base = await summary_of(run_server, request("Paris", "Lyon"))
    now = await summary_of(run_server, request("Paris", "Paris", baseline=base.run_id))
    assert now.gate_passed, now.gate_reasons


async def test_an_error_now_is_a_regression(run_server: RunServer) -> None:
    checks = [pb.CheckSpec(name="eq", type="exact")]
    base_req = pb.RunSuiteRequest(checks=checks, record=True, run_name="exact")
    c = base_req.cases.add(sample=pb.Sample(id="x"), output=pb.Output(text="Paris"))
    c.sample.expected.string_value = "Paris"
    base = await summary_of(run_server, base_req)
    now_req = pb.RunSuiteRequest(checks=checks, cases=[case("x", "Paris")])  # no expected
    now_req.gate.baseline = base.run_id
    now_req.gate.max_error_rate = 1.0
    now = await summary_of(run_server, now_req)
    assert not now.gate_passed
    assert any("x (eq)" in r for r in now.gate_reasons)


async def test_a_name_means_the_newest_complete_run_of_that_name(run_server: RunServer) -> None:
    await summary_of(run_server, request("Lyon"))  # older: s0 failed
    await summary_of(run_server, request("Paris"))  # newest: s0 passed
    now = await summary_of(run_server, request("Lyon", record=False, baseline="nightly"))
    assert not now.gate_passed  # against the newest, s0 regressed


async def test_max_regression_bounds_a_pass_rate_drop(run_server: RunServer) -> None:
    base = await summary_of(run_server, request("Paris", "Paris"))
    # The same two cases pass again; two new cases fail: has_paris drops from 1 to 0.5.
    texts = ("Paris", "Paris", "Lyon", "Nice")
    strict = await summary_of(run_server, request(*texts, baseline=base.run_id))
    assert not strict.gate_passed
    assert any("has_paris" in r and "max_regression 0" in r for r in strict.gate_reasons)
    lenient = await summary_of(
        run_server, request(*texts, baseline=base.run_id, max_regression=0.5)
    )
    assert lenient.gate_passed, lenient.gate_reasons


async def test_a_suite_documents_gate_may_name_the_baseline(run_server: RunServer) -> None:
    base = await summary_of(run_server, request("Paris"))
    doc = f"""
checks:
  has_paris: {{type: contains, needles: [Paris]}}
suites:
  smoke:
    checks: [has_paris]
    gate: {{baseline: {base.run_id}, max_regression: 0}}
"""
    req = pb.RunSuiteRequest(suite_yaml=doc, cases=[case("s0", "Berlin")])
    now = await summary_of(run_server, req)
    assert not now.gate_passed
    assert any("s0 (has_paris)" in r for r in now.gate_reasons)


async def test_an_unknown_baseline_is_invalid_argument_naming_the_field(
    run_server: RunServer,
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(run_server, request("Paris", baseline="no-such-run"))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "no-such-run" in bad_request(err.value)["gate.baseline"]


@pytest.mark.parametrize("value", [-0.1, 1.5])
async def test_max_regression_out_of_range_is_invalid_argument(
    run_server: RunServer, value: float
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await summary_of(run_server, request("Paris", baseline="x", max_regression=value))
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "gate.max_regression" in bad_request(err.value)
