"""Every built-in check declares what it costs, beside its handler, and nothing was lost.

The request meter charges what each check type declares (`CheckType.costs`,
`CheckType.reads_whole_text`); no table in the engine says it any more. These cases
hold the declarations to what the engine's tables said before they moved, and hold
every costly parameter of every built-in type to a declared cost.
"""

from __future__ import annotations

import scorewire.checks  # noqa: F401 - registers the built-in check types
from scorewire.checks.text_metrics import MAX_BLEU_CHARS, MAX_PYTHON_CHARS, MAX_ROUGE_TOKENS
from scorewire.core.charges import (
    charge_language,
    charge_needles,
    charge_pattern,
    charge_schema,
    require_metering,
)
from scorewire.core.registry import FAMILIES, REGISTRY, CheckType, Registry
from scorewire.engine.custom import check

# The engine's tables as they stood when the declarations moved onto the check types
# (then `engine/cost.py`, now `engine/metering.py`: PARAM_COSTS and WHOLE_TEXT_CHECKS).
# Metering every request the
# same way is the promise of that move: a declaration lost or changed on a type makes
# the meter charge less, silently, and fails here. Change these with the type, on
# purpose.
PARAM_COSTS = {
    "regex": {"pattern": charge_pattern},
    "safe_regex": {"pattern": charge_pattern},
    "contains": {"needles": charge_needles, "expected": charge_needles},
    "contains_text": {"value": charge_needles},
    "not_contains": {"value": charge_needles},
    "safety.forbidden": {"phrases": charge_needles},
    "json_schema": {"schema": charge_schema},
    "json_schema_v1": {"schema": charge_schema},
    "language": {"value": charge_language},
}
WHOLE_TEXT_CHECKS = {
    "max_tokens": None,
    "min_tokens": None,
    "word_count": None,
    "bleu": MAX_BLEU_CHARS,
    "rouge_l": 20 * MAX_ROUGE_TOKENS,
    "is_valid_python": MAX_PYTHON_CHARS,
}


def builtin(name: str) -> CheckType | None:
    """The built-in type registered under `name` (not one a test or the server added)."""
    t = REGISTRY.get(name)
    return t if t is not None and t.family in FAMILIES and t.family != "custom" else None


BUILTIN_NAMES = [n for n in REGISTRY.names() if builtin(n) is not None]


def test_the_parameter_charges_are_the_engines_former_table() -> None:
    # by every name a spec may use, in the order they are charged (which limit a
    # request trips first depends on it: `contains` charges needles before expected)
    derived = {}
    for name in BUILTIN_NAMES:
        t = builtin(name)
        assert t is not None
        if t.charges:
            derived[name] = t.charges
    assert derived == PARAM_COSTS
    assert [list(c) for c in derived.values()] == [list(PARAM_COSTS[n]) for n in derived]


def test_the_whole_text_readers_are_the_engines_former_table() -> None:
    # the type the caller wrote counts: `word_count` reads every word, `length` need not
    derived = {}
    for name in BUILTIN_NAMES:
        t = builtin(name)
        assert t is not None
        if t.reads_whole_text is not None:
            derived[name] = t.reads_whole_text.max_chars
    assert derived == WHOLE_TEXT_CHECKS


def test_every_builtin_costly_parameter_declares_a_cost() -> None:
    # the registry self-check over every built-in type, alias types included
    types = {id(t): t for n in BUILTIN_NAMES if (t := builtin(n)) is not None}
    require_metering(types.values())


def test_a_custom_checks_parameters_need_no_cost() -> None:
    # custom checks take CustomParams (a threshold): a costly parameter added there fails
    reg = Registry()
    check("custom.costs", registry=reg)(lambda sample, output: True)
    require_metering(reg.types())
