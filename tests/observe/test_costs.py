"""Cost caps of online evaluation: per rule and per tenant, per hour and per day.

A sampled observation whose judge calls a cap refuses is skipped and counted with reason
`cost_cap` (never a silent drop), and no call is made. The caps are the judge's shared
budgets: with a Redis ledger, money another replica spent counts here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from scorewire.core.errors import SpecError
from scorewire.judge.shared import SharedBudget
from scorewire.observe.costs import CostCaps
from scorewire.observe.opening import rules_from_settings
from scorewire.observe.queue import SqliteQueue
from scorewire.observe.rules import parse_rules
from scorewire.runs.sqlite import SqliteRunStore
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb

from tests.observe.conftest import redis_server  # noqa: F401  (the fixture)
from tests.observe.servers import ObserveServer, observation, observe_server
from tests.observe.test_consumer import _count, _depth_zero, _results
from tests.support.judge import judge_harness, level_reply
from tests.support.wait import wait_until_async

JUDGE = {"type": "judge", "rubric": "Is it polite?"}
SKIPPED = "scorewire_observe_skipped_total"


def _skipped(srv: ObserveServer, rule: str, n: int):
    async def check() -> bool:
        return srv.metric(SKIPPED, rule=rule, reason="cost_cap") >= n

    return check


async def test_a_spent_rule_cap_skips_and_counts_and_calls_no_judge(tmp_path: Path) -> None:
    # a cap of $0 an hour: every sampled observation is skipped as cost_cap, none recorded,
    # none left queued, and the judge is never called
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = SqliteQueue(tmp_path / "observe.db", max_depth=100)
    rule = {"name": "polite", "checks": [JUDGE], "cost_caps": {"hour_usd": 0}}
    async with judge_harness(openai_default=level_reply(5)) as h:
        async with observe_server(
            queue, parse_rules({"rules": [rule]}), runs=store, judge=h.service
        ) as srv:
            batch = [observation(f"Thanks, {n}.") for n in ("Ann", "Bo")]
            await srv.observe.Observe(opb.ObserveRequest(observations=batch))
            await wait_until_async(_skipped(srv, "polite", 2), "two skipped for cost")
            await wait_until_async(lambda: _depth_zero(queue), "the queue emptied")
            assert srv.metric("scorewire_observe_sampled_total", rule="polite") == 2
            assert await _results(srv, "polite") == []
        assert h.openai.calls == 0


async def test_a_tenant_cap_another_replica_spent_holds_here(
    redis_server,  # noqa: F811
    tmp_path: Path,
) -> None:
    # the tenant's daily cap lives in the shared budgets' Redis: spent by another replica,
    # this one skips that tenant's observations, while another tenant's are still judged
    store = await SqliteRunStore.open(str(tmp_path / "runs.db"))
    queue = SqliteQueue(tmp_path / "observe.db", max_depth=100)
    rules = parse_rules({"rules": [{"name": "polite", "checks": [JUDGE]}]})
    shared = {"budget_url": redis_server.url, "observe_tenant_cost_cap_day_usd": 0.5}
    async with judge_harness(openai_default=level_reply(5), **shared) as other:
        # the other replica: the same ledger, the same budget's name
        spent = SharedBudget(
            other.service.ledger, "observe:tenant:checkout:day", 0.5, period_s=86_400
        )
        held = await spent.reserve(0.5)
        assert held is not None
        spent.settle(held, 0.5)
        await other.service.ledger.aclose()  # settled once its tasks are done
    async with judge_harness(openai_default=level_reply(5), **shared) as h:
        async with observe_server(
            queue, rules, runs=store, judge=h.service, observe_tenant_cost_cap_day_usd=0.5
        ) as srv:
            capped, free = observation("Thanks, Ann."), observation("Thanks, Bo.")
            capped.metadata.tenant, free.metadata.tenant = "checkout", "search"
            await srv.observe.Observe(opb.ObserveRequest(observations=[capped, free]))
            (scored,) = await wait_until_async(lambda: _count(srv, "polite", 1), "one judged")
            await wait_until_async(_skipped(srv, "polite", 1), "one skipped for cost")
        assert scored.case.output.text == "Thanks, Bo."
        assert h.openai.calls == 1


async def test_a_judge_under_a_cap_that_cannot_be_priced_is_refused_at_load(
    tmp_path: Path,
) -> None:
    # a cap needs prices: the rule naming an unpriced model is refused naming its field;
    # the same rule under no cap loads
    (tmp_path / "rules.yaml").write_text(
        "rules:\n"
        "  - name: fine\n"
        "    compact: ['contains:x']\n"
        "  - name: unpriced\n"
        "    checks: [{type: judge, rubric: 'Polite?', model: 'openai:no-such-model'}]\n"
    )
    capped = Settings(
        state_dir=str(tmp_path), observe_rules_file="rules.yaml", observe_rule_cost_cap_day_usd=1
    )
    uncapped = Settings(state_dir=str(tmp_path), observe_rules_file="rules.yaml")
    async with judge_harness() as h:
        assert len(rules_from_settings(uncapped, h.service)) == 2
        with pytest.raises(SpecError) as err:
            rules_from_settings(capped, h.service)
    fields = [v.field for v in err.value.violations]
    assert fields and all(f.startswith("rules[1].checks[0]") for f in fields)
    assert "price" in str(err.value).lower()


def test_cost_caps_are_checked_at_load() -> None:
    # an unknown key or a negative amount is refused naming the field
    with pytest.raises(SpecError) as err:
        parse_rules(
            {
                "rules": [
                    {
                        "name": "r",
                        "compact": ["contains:x"],
                        "cost_caps": {"hour_usd": -1, "week_usd": 3},
                    }
                ]
            }
        )
    assert sorted(v.field for v in err.value.violations) == [
        "rules[0].cost_caps.hour_usd",
        "rules[0].cost_caps.week_usd",
    ]


async def test_a_rule_changed_to_another_cap_is_held_to_the_new_one() -> None:
    # a rule updated over gRPC with a higher cap is not kept to the budget of the old one
    caps = CostCaps(Settings(), judge=None)
    before, after = (
        parse_rules({"rules": [{"name": "r", "compact": ["contains:x"], "cost_caps": c}]})[0]
        for c in ({"hour_usd": 0}, {"hour_usd": 1})
    )
    spent, raised = caps.budget(before, "t"), caps.budget(after, "t")
    assert spent is not None and raised is not None
    assert await spent.reserve(0.5) is None
    assert await raised.reserve(0.5) is not None
    assert (
        caps.budget(parse_rules({"rules": [{"name": "n", "compact": ["contains:x"]}]})[0], "t")
        is None
    )
