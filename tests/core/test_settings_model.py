"""The settings model is what the snapshot says: every setting, in order, as it was declared.

`data/settings_snapshot.json` holds, for every field of `Settings` in `model_fields`
order, its annotation, default, constraints, description, the docstring written under
it and its environment variable, with the model's validators, public methods, config
and JSON Schema. Moving settings between classes (the model is composed of mixins by
purpose) must leave all of it as it was. A deliberate change to a setting (or a pydantic
upgrade that prints fields differently) rewrites the snapshot, and its diff shows exactly
what changed:

    PYTHONPATH=service python -m tests.core.test_settings_model
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from pydantic_settings import BaseSettings, EnvSettingsSource
from scorewire.settings import Settings

SNAPSHOT = Path(__file__).resolve().parent / "data" / "settings_snapshot.json"
PREFIX = "SCOREWIRE_"


def _docstrings() -> dict[str, str]:
    """The string literal under each annotated attribute of Settings and its scorewire bases."""
    found: dict[str, str] = {}
    for cls in reversed(Settings.__mro__):
        if not cls.__module__.startswith("scorewire"):
            continue
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        body = tree.body[0]
        assert isinstance(body, ast.ClassDef)
        for node, after in zip(body.body, [*body.body[1:], None], strict=True):
            if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
                continue
            if isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant):
                found[node.target.id] = after.value.value
    return found


@functools.cache
def _describe() -> dict[str, Any]:
    """Everything about the model that the split must keep, as JSON."""
    docs = _docstrings()
    fields = [
        {
            "name": name,
            "env": PREFIX + name.upper(),
            "annotation": repr(field.annotation),
            "default": repr(field.get_default(call_default_factory=True)),
            "constraints": [repr(m) for m in field.metadata],
            "description": field.description,
            "docstring": docs.get(name),
            "field": repr(field),
        }
        for name, field in Settings.model_fields.items()
    ]
    decorators = Settings.__pydantic_decorators__
    return {
        "doc": Settings.__doc__,
        "fields": fields,
        "field_validators": {
            name: list(d.info.fields) for name, d in decorators.field_validators.items()
        },
        "model_validators": sorted(decorators.model_validators),
        "methods": sorted(
            name
            for name, value in inspect.getmembers(Settings, inspect.isfunction)
            if not name.startswith("_") and value.__module__.startswith("scorewire")
        ),
        "config": {
            key: repr(value)
            for key, value in sorted(Settings.model_config.items())
            if key not in BaseSettings.model_config or BaseSettings.model_config[key] != value
        },
        "json_schema": Settings.model_json_schema(),
    }


@functools.cache
def _snapshot() -> dict[str, Any]:
    return json.loads(SNAPSHOT.read_text(encoding="utf-8"))  # type: ignore[no-any-return]


# the snapshot's fields (none when it is being written for the first time)
EXPECTED: list[dict[str, Any]] = _snapshot()["fields"] if SNAPSHOT.exists() else []


def test_the_fields_are_the_snapshots_in_the_same_order() -> None:
    # names and order: model_dump, validation errors (the first one is what start-up
    # reports) and the environment source all follow model_fields' order
    assert list(Settings.model_fields) == [f["name"] for f in _snapshot()["fields"]]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda f: f["name"])
def test_every_field_is_as_it_was_declared(expected: dict[str, Any]) -> None:
    # annotation, default, constraints, description and docstring, field by field
    by_name = {f["name"]: f for f in _describe()["fields"]}
    assert by_name.get(expected["name"]) == expected


def test_validators_methods_config_and_schema_are_as_they_were() -> None:
    # a validator left behind, a method lost or a config key changed shows here
    now, before = _describe(), _snapshot()
    for key in ("doc", "field_validators", "model_validators", "methods", "config"):
        assert now[key] == before[key], key
    assert now["json_schema"] == before["json_schema"]


@pytest.mark.parametrize("expected", EXPECTED, ids=lambda f: f["name"])
def test_every_field_is_read_from_its_own_variable_alone(
    expected: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # SCOREWIRE_<FIELD>, flat: the variable sets that field and no other. A JSON
    # string is a value for simple and complex (JSON-decoded) fields alike.
    for key in list(os.environ):
        if key.upper().startswith(PREFIX):
            monkeypatch.delenv(key)
    monkeypatch.setenv(expected["env"], '"x"')
    assert list(EnvSettingsSource(Settings)()) == [expected["name"]]


def test_the_docstring_reader_sees_every_field() -> None:
    # the comparison above is only as good as the reader: every field has a docstring
    assert set(_docstrings()) >= set(Settings.model_fields)


if __name__ == "__main__":
    SNAPSHOT.parent.mkdir(exist_ok=True)
    SNAPSHOT.write_text(json.dumps(_describe(), indent=1, ensure_ascii=False) + "\n", "utf-8")
    sys.stdout.write(f"wrote {SNAPSHOT}\n")
