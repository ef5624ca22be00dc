"""Rules managed over gRPC: created, changed and deleted by admin tokens, stored beside
the queue so that every replica applies them, checked at creation as the file's are."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.observe.conftest import QueueOpener
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.observe.test_tenants import TOKENS, md
from tests.support.judge import judge_harness
from tests.support.rpc import bad_request
from tests.support.wait import wait_until_async


def _rule(name: str = "lyon", needle: str = "Lyon", **kw: object) -> opb.Rule:
    fields: dict[str, object] = {"sampling_rate": 1.0, **kw}
    return opb.Rule(
        name=name,
        checks=[pb.CheckSpec(type="contains", params={"needles": [needle]})],
        **fields,  # type: ignore[arg-type]
    )


async def _scored(srv: ObserveServer, rule: str, n: int) -> list[rpb.RunCaseResult] | None:
    query = rpb.ListRunsRequest(labels={"observe_rule": rule})
    out: list[rpb.RunCaseResult] = []
    for run in (await srv.runs.ListRuns(query, metadata=md("root"))).runs:
        got = await srv.runs.ListRunResults(
            rpb.ListRunResultsRequest(run_id=run.run_id), metadata=md("root")
        )
        out.extend(got.results)
    return out if len(out) == n else None


async def _names(srv: ObserveServer) -> list[str] | None:
    rules = (await srv.observe.ListRules(opb.ListRulesRequest(), metadata=md("root"))).rules
    return [r.name for r in rules]


async def test_a_created_rule_is_applied_by_every_replica(
    open_queue: QueueOpener, tmp_path: Path
) -> None:
    # stored beside the queue: the replica that did not create it lists and applies it too
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    first, second = await open_queue(), await open_queue()
    async with (
        observe_server(first, consume=False, auth_tokens=TOKENS) as a,
        observe_server(second, runs=store, auth_tokens=TOKENS) as b,
    ):
        assert await _names(b) == ["all"]
        made = await a.observe.CreateRule(
            opb.CreateRuleRequest(rule=_rule(cost_cap_day_usd=2.0)), metadata=md("root")
        )
        assert made.rule.cost_cap_day_usd == 2.0
        assert await _names(a) == ["all", "lyon"]

        async def listed() -> bool:
            return await _names(b) == ["all", "lyon"]

        await wait_until_async(listed, "the other replica lists it")
        batch = opb.ObserveRequest(observations=[observation("Lyon"), observation("Nice")])
        await a.observe.Observe(batch, metadata=md("checkout"))
        scored = await wait_until_async(lambda: _scored(b, "lyon", 2), "scored by the new rule")
        assert sorted(r.result.passed for r in scored) == [False, True]

        changed = _rule(needle="Nice")
        await a.observe.UpdateRule(opb.UpdateRuleRequest(rule=changed), metadata=md("root"))
        got = (await a.observe.ListRules(opb.ListRulesRequest(), metadata=md("root"))).rules
        assert list(got[1].checks[0].params["needles"]) == ["Nice"]
        await a.observe.DeleteRule(opb.DeleteRuleRequest(name="lyon"), metadata=md("root"))
        assert await _names(a) == ["all"]


async def test_rule_changes_are_refused_with_the_right_code(tmp_path: Path) -> None:
    # callers may not; bad rules name the field; names and origins are kept apart
    from scorewire.observe.queue import SqliteQueue

    queue = SqliteQueue(tmp_path / "observe.db", max_depth=10)
    async with (
        judge_harness() as h,
        observe_server(queue, consume=False, auth_tokens=TOKENS, judge=h.service) as srv,
    ):
        create = srv.observe.CreateRule

        async def code(call, request, who: str = "root") -> tuple[grpc.StatusCode, list]:
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await call(request, metadata=md(who))
            return err.value.code(), list(bad_request(err.value))

        ok = opb.CreateRuleRequest(rule=_rule())
        assert (await code(create, ok, "checkout"))[0] == grpc.StatusCode.PERMISSION_DENIED
        unknown = _rule()
        unknown.checks[0].type = "no_such_check"
        assert await code(create, opb.CreateRuleRequest(rule=unknown)) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            ["rule.checks[0].type"],
        )
        assert await code(create, opb.CreateRuleRequest(rule=_rule(sampling_rate=0))) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            ["rule.sampling_rate"],
        )
        unpriced = opb.Rule(name="judged", sampling_rate=1.0, cost_cap_hour_usd=1.0)
        unpriced.checks.add(
            type="judge", params={"rubric": "Polite?", "model": "openai:no-such-model"}
        )
        status, fields = await code(create, opb.CreateRuleRequest(rule=unpriced))
        assert status == grpc.StatusCode.INVALID_ARGUMENT
        assert fields and all(f.startswith("rule.checks[0]") for f in fields)
        file_rule = _rule(name="all")
        assert (await code(create, opb.CreateRuleRequest(rule=file_rule)))[0] == (
            grpc.StatusCode.ALREADY_EXISTS
        )
        await create(ok, metadata=md("root"))
        assert (await code(create, ok))[0] == grpc.StatusCode.ALREADY_EXISTS
        update = srv.observe.UpdateRule
        assert (await code(update, opb.UpdateRuleRequest(rule=_rule(name="x"))))[0] == (
            grpc.StatusCode.NOT_FOUND
        )
        assert (await code(update, opb.UpdateRuleRequest(rule=file_rule)))[0] == (
            grpc.StatusCode.FAILED_PRECONDITION
        )
        delete = srv.observe.DeleteRule
        assert (await code(delete, opb.DeleteRuleRequest(name="all")))[0] == (
            grpc.StatusCode.FAILED_PRECONDITION
        )
        assert (await code(delete, opb.DeleteRuleRequest(name="x")))[0] == (
            grpc.StatusCode.NOT_FOUND
        )
