"""The official JSON-Schema-Test-Suite against the `json_schema` check.

The suite (github.com/json-schema-org/JSON-Schema-Test-Suite, commit in
`tests/data/json-schema-test-suite/VERSION`, MIT licence beside it) is vendored for
drafts 7, 2019-09 and 2020-12, its `optional/` cases included except the `format` ones
(`format` is an annotation here, as 2019-09 and later say by default). Every group either
compiles, and then each of its cases must agree with the suite, or is refused at load for
one of the reasons listed in REFUSED; the few known disagreements are listed one by one
in DISAGREE with the reason, and each listing must still be needed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from scorewire.core.context import EMPTY_CONTEXT
from scorewire.core.errors import SpecError
from scorewire.core.model import Output, Sample
from scorewire.engine.execute import run_check_sync
from scorewire.engine.spec import CheckSpec, compile_check

SUITE = Path(__file__).resolve().parents[1] / "data" / "json-schema-test-suite" / "tests"
DRAFTS = {
    "draft7": "http://json-schema.org/draft-07/schema#",
    "draft2019-09": "https://json-schema.org/draft/2019-09/schema",
    "draft2020-12": "https://json-schema.org/draft/2020-12/schema",
}

# (file, fragment of the load error): why the check refuses such a schema.
REFUSED: dict[tuple[str, str], str] = {
    ("boolean_schema.json", "must be a JSON Schema object"): (
        "a whole schema of true/false says nothing about an output; subschemas may be booleans"
    ),
    ("refRemote.json", "cannot resolve $ref"): "remote references: nothing is fetched",
    ("optional/cross-draft.json", "cannot resolve $ref"): "remote references",
    ("dynamicRef.json", "cannot resolve $ref"): "remote references",
    ("vocabulary.json", "unknown JSON Schema draft"): "a remote custom metaschema",
    ("unevaluatedProperties.json", "together with patternProperties"): (
        "jsonschema would evaluate those patterns with Python's backtracking re"
    ),
}

# (draft, file, group, case): why the verdict differs from the suite's.
DISAGREE: dict[tuple[str, str, str, str], str] = {
    (
        "draft2019-09",
        "unevaluatedProperties.json",
        "unevaluatedProperties with adjacent non-bool additionalProperties",
        "with additional properties",
    ): "jsonschema 4.26 itself answers invalid in draft 2019-09 (upstream)",
    **{
        ("draft7", "optional/content.json", group, case): (
            "contentMediaType/contentEncoding are annotations, as in 2019-09 and later"
        )
        for group, case in [
            (
                "validation of string-encoded content based on media type",
                "an invalid JSON document",
            ),
            (
                "validation of binary string-encoding",
                "an invalid base64 string (% is not a valid character)",
            ),
            (
                "validation of binary-encoded media type documents",
                "a validly-encoded invalid JSON document",
            ),
            (
                "validation of binary-encoded media type documents",
                "an invalid base64 string that is valid JSON",
            ),
        ]
    },
}


def _groups() -> list[tuple[str, str, dict[str, Any]]]:
    out = []
    for draft in DRAFTS:
        for path in sorted((SUITE / draft).rglob("*.json")):
            for group in json.loads(path.read_text(encoding="utf-8")):
                out.append((draft, path.relative_to(SUITE / draft).as_posix(), group))
    return out


GROUPS = _groups()
SEEN_REFUSALS: set[tuple[str, str]] = set()
SEEN_DISAGREEMENTS: set[tuple[str, str, str, str]] = set()


@pytest.mark.parametrize(
    ("draft", "file", "group"),
    GROUPS,
    ids=[f"{d}/{f}/{g['description']}" for d, f, g in GROUPS],
)
def test_the_check_agrees_with_the_official_suite(
    draft: str, file: str, group: dict[str, Any]
) -> None:
    schema = group["schema"]
    if isinstance(schema, dict) and "$schema" not in schema:
        schema = {"$schema": DRAFTS[draft], **schema}
    try:
        compiled = compile_check(CheckSpec("json_schema", {"schema": schema}), "checks[0]")
    except SpecError as err:
        message = err.violations[0].description
        rule = next((k for k in REFUSED if k[0] == file and k[1] in message), None)
        assert rule is not None, f"refused at load without a listed reason: {message}"
        SEEN_REFUSALS.add(rule)
        return
    wrong = []
    for case in group["tests"]:
        got = run_check_sync(compiled, Sample("s"), Output(json.dumps(case["data"])), EMPTY_CONTEXT)
        key = (draft, file, group["description"], case["description"])
        agrees = got.error is None and got.passed is case["valid"]
        if key in DISAGREE:
            assert not agrees, f"listed as a disagreement but now agrees: {key}"
            SEEN_DISAGREEMENTS.add(key)
        elif not agrees:
            wrong.append(f"{case['description']}: suite {case['valid']}, got {got}")
    assert wrong == []


def test_every_listed_exception_is_still_needed() -> None:
    # runs after the parametrised cases (same module, file order): a listing that no
    # case uses any more must be removed, so the lists stay the truth
    if len(SEEN_REFUSALS) == 0 and len(SEEN_DISAGREEMENTS) == 0:
        pytest.skip("run with the suite's cases (not selected alone)")
    assert set(REFUSED) - SEEN_REFUSALS == set()
    assert set(DISAGREE) - SEEN_DISAGREEMENTS == set()


def test_the_vendored_suite_is_complete() -> None:
    # the three drafts are there with their required and optional folders
    for draft in DRAFTS:
        names = {p.name for p in (SUITE / draft).glob("*.json")}
        assert {"pattern.json", "multipleOf.json", "uniqueItems.json", "ref.json"} <= names
        assert (SUITE / draft / "optional" / "ecmascript-regex.json").exists()
    assert len(GROUPS) > 1000
