"""The check registry keeps its promise to clients: every type is fully documented.

`ListChecks` serves each type's description, family and parameter schema; a client (or
an editor reading `schemas/`) learns what a parameter means only from its description.
Like promptfoo's registry under test, these cases refuse any incomplete definition.
"""

from __future__ import annotations

from typing import Any

import pytest
import scorewire.checks  # noqa: F401 - registers the built-in check types
from scorewire.core.registry import FAMILIES, REGISTRY, CheckType

BUILTIN = [t for t in REGISTRY.types() if t.build.__module__.startswith("scorewire.checks.")]
IDS = [t.name for t in BUILTIN]


def undocumented(schema: dict[str, Any], where: str = "") -> list[str]:
    """Paths of the parameters (nested ones included) that have no description."""
    missing = []
    for name, prop in schema.get("properties", {}).items():
        if not str(prop.get("description", "")).strip():
            missing.append(f"{where}{name}")
    for def_name, sub in schema.get("$defs", {}).items():
        missing.extend(undocumented(sub, f"$defs.{def_name}."))
    return missing


def test_every_family_registers_types() -> None:
    # the built-in families are all imported (a family that fails to register is not silent)
    assert {t.family for t in BUILTIN} == set(FAMILIES) - {"custom"}


@pytest.mark.parametrize("check_type", BUILTIN, ids=IDS)
def test_every_type_is_registered_by_a_module_of_its_family(check_type: CheckType) -> None:
    # one list names each family and its modules: `text` is text_metrics.py, `judge` two
    module = check_type.build.__module__.removeprefix("scorewire.checks.")
    assert module in FAMILIES[check_type.family]


@pytest.mark.parametrize("check_type", BUILTIN, ids=IDS)
def test_every_type_has_a_one_line_description(check_type: CheckType) -> None:
    # one sentence for people, served by ListChecks
    desc = check_type.description
    assert desc.strip() and "\n" not in desc and desc.endswith("."), repr(desc)


@pytest.mark.parametrize("check_type", BUILTIN, ids=IDS)
def test_every_type_belongs_to_a_known_family(check_type: CheckType) -> None:
    # a family outside the list is a typo or a module that skipped review
    assert check_type.family in FAMILIES


@pytest.mark.parametrize("check_type", BUILTIN, ids=IDS)
def test_every_parameter_has_a_description(check_type: CheckType) -> None:
    # `bleu.value`, `max_tokens.value` and `number_range.path` were served bare
    assert undocumented(check_type.params_schema()) == []


@pytest.mark.parametrize("check_type", BUILTIN, ids=IDS)
def test_a_threshold_parameter_is_applied_by_the_engine(check_type: CheckType) -> None:
    # a family with a `threshold` declares a ThresholdRule, so no check decides it itself
    props = check_type.params_schema()["properties"]
    assert ("threshold" in props) == (check_type.threshold is not None)
    if check_type.threshold is not None:
        bounds = props["threshold"]
        kinds = bounds.get("anyOf", [bounds])
        number = next(k for k in kinds if k.get("type") == "number")
        assert (number["minimum"], number["maximum"]) == (0.0, 1.0)
