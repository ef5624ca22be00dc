"""Evaluation rules: loaded and compiled once, refused naming the field, sampled by trace."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest
from scorewire.core.errors import SpecError
from scorewire.observe.rules import load_rules_file, parse_rules, trace_fraction

GOOD = """
rules:
  - name: checkout-json
    checks:
      - {type: contains, needles: [Paris]}
    compact: ["length:1..200"]
    filter: {route: /checkout, labels.env: prod}
    sampling_rate: 0.1
    settle_delay_s: 2
  - name: everything
    compact: ["contains:Paris"]
"""


def _fields(doc: object) -> dict[str, str]:
    with pytest.raises(SpecError) as err:
        parse_rules(doc)
    return {v.field: v.description for v in err.value.violations}


def test_a_yaml_file_loads_with_its_checks_compiled(tmp_path: Path) -> None:
    # structured and compact checks compile into one plan; defaults fill what is left out
    path = tmp_path / "rules.yaml"
    path.write_text(GOOD, encoding="utf-8")
    first, second = load_rules_file(path)
    assert first.plan.names == ["contains", "length:1..200"]
    assert (first.sampling_rate, first.settle_delay_s) == (0.1, 2.0)
    assert dict(first.filter) == {"route": "/checkout", "labels.env": "prod"}
    assert (second.sampling_rate, second.settle_delay_s, dict(second.filter)) == (1.0, 0.0, {})


def test_a_json_file_loads(tmp_path: Path) -> None:
    # the file's suffix picks the parser
    path = tmp_path / "rules.json"
    path.write_text(json.dumps({"rules": [{"name": "a", "compact": ["contains:x"]}]}))
    assert [r.name for r in load_rules_file(path)] == ["a"]


def test_an_unknown_check_type_is_refused_at_load_naming_its_field() -> None:
    # the consumer never meets a rule it cannot score
    fields = _fields({"rules": [{"name": "a", "checks": [{"type": "no_such_check"}]}]})
    assert list(fields) == ["rules[0].checks[0].type"]


def test_a_bad_parameter_and_compact_line_are_named_under_the_rule() -> None:
    # paths of the compiler's violations are put under the rule's
    doc = {
        "rules": [
            {"name": "ok", "compact": ["contains:x"]},
            {"name": "b", "checks": [{"type": "contains", "nope": 1}], "compact": ["x"]},
        ]
    }
    fields = _fields(doc)
    assert all(f.startswith("rules[1].") for f in fields), fields
    assert any(f.startswith("rules[1].checks[0]") for f in fields), fields


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"name": "a", "compact": ["contains:x"], "sampling_rate": 0.00001}, "sampling_rate"),
        ({"name": "a", "compact": ["contains:x"], "sampling_rate": 1.5}, "sampling_rate"),
        ({"name": "a", "compact": ["contains:x"], "sampling_rate": "10%"}, "sampling_rate"),
        ({"name": "a", "compact": ["contains:x"], "settle_delay_s": -1}, "settle_delay_s"),
        ({"name": "a", "compact": ["contains:x"], "filter": {"host": "x"}}, "filter.host"),
        ({"name": "a", "compact": ["contains:x"], "filter": {"route": 3}}, "filter.route"),
        ({"name": "a", "compact": ["contains:x"], "sample": 1}, "sample"),
        ({"name": "bad name", "compact": ["contains:x"]}, "name"),
        ({"name": "a"}, "checks"),
    ],
)
def test_each_bad_field_is_named(rule: dict[str, object], field: str) -> None:
    # one violation, at the rule's own field
    assert list(_fields({"rules": [rule]})) == [f"rules[0].{field}"]


def test_two_rules_may_not_share_a_name() -> None:
    # the name keys the rule's runs and metrics
    doc = {"rules": [{"name": "a", "compact": ["contains:x"]}] * 2}
    assert list(_fields(doc)) == ["rules[1].name"]


def test_an_unreadable_file_names_the_setting(tmp_path: Path) -> None:
    # a missing file is a start-up error naming SCOREWIRE_OBSERVE_RULES_FILE's field
    with pytest.raises(SpecError) as err:
        load_rules_file(tmp_path / "missing.yaml")
    assert err.value.violations[0].field == "observe_rules_file"


def test_filters_are_equality_on_every_key() -> None:
    # all pairs must match; labels are looked up under labels.<key>
    (rule,) = parse_rules(
        {
            "rules": [
                {
                    "name": "a",
                    "compact": ["contains:x"],
                    "filter": {"route": "/c", "labels.env": "prod"},
                }
            ]
        }
    )
    assert rule.matches({"route": "/c", "labels.env": "prod", "model": "m"})
    assert not rule.matches({"route": "/c", "labels.env": "dev"})
    assert not rule.matches({"route": "/c"})


def test_sampling_a_lower_rate_picks_a_subset_within_binomial_noise() -> None:
    # 100,000 random traces: the 1% set is inside the 10% set, and both rates are within
    # five standard deviations of their expectation
    doc = {
        "rules": [
            {"name": f"r{p}", "compact": ["contains:x"], "sampling_rate": p} for p in (0.01, 0.1)
        ]
    }
    low, high = parse_rules(doc)
    traces = [secrets.token_hex(16) for _ in range(100_000)]
    at_low = {t for t in traces if low.samples(t)}
    at_high = {t for t in traces if high.samples(t)}
    assert at_low <= at_high
    for picked, p in ((at_low, 0.01), (at_high, 0.1)):
        sd = (len(traces) * p * (1 - p)) ** 0.5
        assert abs(len(picked) - len(traces) * p) < 5 * sd


def test_the_fraction_is_the_sha256_of_the_trace_id() -> None:
    # pinned: another replica or a client library computes the same decision
    assert trace_fraction("") == int("e3b0c44298fc1c14", 16) / 2**64
