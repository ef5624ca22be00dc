"""`bounded_yaml.load`: what aliases expand a document to is bounded before it is built."""

from __future__ import annotations

import pytest
import yaml
from scorewire.core.cost import LimitExceeded
from scorewire.core.errors import SpecError
from scorewire.engine.metering import request_meter
from scorewire.settings import Settings
from scorewire.suites import bounded_yaml
from scorewire.suites.checkllm_request import load_request_checkllm
from scorewire.suites.evalstone_request import load_request_suite
from scorewire.suites.yaml_document import parse_yaml


def aliased(text: str, copies: int) -> str:
    """A flow list of `copies` aliases of one scalar."""
    return f"[&s '{text}'" + ", *s" * (copies - 1) + "]"


def test_the_defaults_are_the_settings_defaults() -> None:
    # The CLI and the in-process API load files under what the server allows by default.
    assert Settings().max_suite_expanded_bytes == bounded_yaml.MAX_EXPANDED_BYTES
    assert Settings().max_suite_expanded_nodes == bounded_yaml.MAX_EXPANDED_NODES


def test_an_expansion_over_the_byte_limit_is_refused_at_the_collection() -> None:
    # 10 copies of 100 bytes: ~1 kB once expanded, refused under 1,000, with the place.
    doc = "a: 1\nb: " + aliased("x" * 100, 10) + "\n"
    assert bounded_yaml.load(doc, max_bytes=1_100) == {"a": 1, "b": ["x" * 100] * 10}
    with pytest.raises(bounded_yaml.ExpansionTooLarge) as info:
        bounded_yaml.load(doc, max_bytes=1_000)
    assert info.value.what == "bytes"
    assert info.value.problem_mark.line == 1 and info.value.problem_mark.column == 3


def test_bytes_are_counted_in_utf8() -> None:
    # The same document in a two-byte letter is twice the bytes.
    assert bounded_yaml.load(aliased("x" * 100, 10), max_bytes=1_500)
    with pytest.raises(bounded_yaml.ExpansionTooLarge):
        bounded_yaml.load(aliased("é" * 100, 10), max_bytes=1_500)


def test_nested_aliases_multiply_without_being_built() -> None:
    # 990 x 1,000 x 4 kB = 4 GB (under a million nodes): the count is capped, not a walk.
    doc = "[&l " + aliased("x" * 4000, 1000) + ", *l" * 989 + "]"
    with pytest.raises(bounded_yaml.ExpansionTooLarge) as info:
        bounded_yaml.load(doc)
    assert info.value.what == "bytes"


def test_a_document_without_aliases_is_not_held_to_the_limit() -> None:
    # Its own size (max_suite_bytes) bounds it; the limit is on what aliases add.
    doc = "[" + ", ".join(["'" + "x" * 100 + "'"] * 100) + "]"
    assert len(bounded_yaml.load(doc, max_bytes=1_024)) == 100


def test_the_node_limit_still_holds() -> None:
    doc = aliased("x", 2_000)
    assert len(bounded_yaml.load(doc, max_nodes=2_001)) == 2_000
    with pytest.raises(bounded_yaml.ExpansionTooLarge) as info:
        bounded_yaml.load(doc, max_nodes=1_999)
    assert info.value.what == "nodes"


def test_a_cycle_is_invalid_yaml_not_a_limit() -> None:
    with pytest.raises(SpecError) as info:
        parse_yaml("a: &a [*a]\n")
    assert "contains it" in info.value.violations[0].description


def test_requests_read_the_limits_from_their_settings() -> None:
    # Over a request's limit: LimitExceeded naming the setting, at suite_yaml; the same
    # document under a higher setting loads.
    doc = "description: " + aliased("x" * 1000, 100) + "\nchecks:\n  a: {type: json_valid}\n"
    small = request_meter(Settings(max_suite_expanded_bytes=50_000))
    with pytest.raises(LimitExceeded) as info:
        load_request_suite(suite_yaml=doc, meter=small)
    assert info.value.setting == "max_suite_expanded_bytes"
    assert info.value.field == "suite_yaml"
    assert load_request_suite(suite_yaml=doc, meter=request_meter(Settings()))


def test_checkllm_vars_are_bounded_the_same_way() -> None:
    doc = (
        f"tests:\n  - vars: {{q: {aliased('x' * 1000, 100)}}}\n"
        "    assert: [{type: contains, value: x}]\n    output: x\n"
    )
    with pytest.raises(LimitExceeded) as info:
        load_request_checkllm(doc, meter=request_meter(Settings(max_suite_expanded_bytes=50_000)))
    assert (info.value.setting, info.value.field) == ("max_suite_expanded_bytes", "suite_yaml")


def test_without_a_meter_the_limit_is_a_spec_error() -> None:
    # The CLI reports a file too big once expanded like any other problem of the file.
    doc = "[&l " + aliased("x" * 4000, 1000) + ", *l" * 989 + "]"
    with pytest.raises(SpecError) as info:
        parse_yaml(doc)
    assert "max_suite_expanded_bytes" in info.value.violations[0].description


def test_the_document_size_is_a_request_limit_in_utf8_bytes() -> None:
    # 2,000 two-byte letters are 4,000 bytes: over a 3,000-byte limit though 2,000 long.
    doc = "description: " + "é" * 2_000 + "\nchecks:\n  a: {type: json_valid}\n"
    with pytest.raises(LimitExceeded) as info:
        load_request_suite(suite_yaml=doc, meter=request_meter(Settings(max_suite_bytes=3_000)))
    assert (info.value.setting, info.value.field) == ("max_suite_bytes", "suite_yaml")
    assert load_request_suite(suite_yaml=doc, meter=request_meter(Settings(max_suite_bytes=5_000)))
    with pytest.raises(SpecError):  # unmetered (the CLI): the default, as a problem of the file
        parse_yaml("# pad\n" * 800_000)


def test_nesting_is_bounded_as_written() -> None:
    # 100 levels load; one more is refused at the node that passes the limit.
    assert bounded_yaml.load("[" * 99 + "x" + "]" * 99) is not None
    for doc in ("[" * 100 + "x" + "]" * 100, "[" * 5000 + "]" * 5000):
        with pytest.raises(SpecError) as info:
            parse_yaml(doc)
        assert "levels deep" in info.value.violations[0].description


def test_nesting_is_bounded_once_aliases_expand_it() -> None:
    # Five anchors of 30 levels, each nesting the one before: 150 levels once expanded
    # from a document that nests no more than 31 as written.
    doc = "a0: &a0 " + "[" * 30 + "x" + "]" * 30 + "\n"
    doc += "".join(f"a{i}: &a{i} " + "[" * 30 + f"*a{i - 1}" + "]" * 30 + "\n" for i in range(1, 5))
    with pytest.raises(SpecError) as info:
        parse_yaml(doc)
    assert "levels deep" in info.value.violations[0].description
    # Three of them (90 levels) load.
    assert parse_yaml("\n".join(doc.splitlines()[:3]))["a2"] is not None


DOCUMENTS = [
    "a: 1\nb: [x, 'y', \"z\"]\nc: {d: 2.5, e: null, f: true}\n",
    "a: 1\nb: " + aliased("x" * 100, 10) + "\n",
    "[" * 99 + "x" + "]" * 99,
    "[" * 101 + "x" + "]" * 101,
    "[" * 5000 + "]" * 5000,
    "a: &a [*a]\n",
    "x: 2001-13-45\n",
    "x: " + "9" * 5000 + "\n",
    "x: " + ":".join(["59"] * 400) + "\n",
    "a: b: c\n",
    "x: \x00\n",
    "key: |\n  two\n  lines\n",
    "- &s 'é'\n- *s\n",
    "",
]


@pytest.mark.skipif(len(bounded_yaml._LOADERS) < 2, reason="PyYAML is built without libyaml")
@pytest.mark.parametrize("doc", DOCUMENTS, ids=range(len(DOCUMENTS)))
def test_both_parsers_load_and_refuse_alike(doc: str) -> None:
    # libyaml's parser is the one used; PyYAML's own is the fallback where PyYAML has no
    # libyaml. Same values, and the same kind of refusal.
    outcomes = []
    for parser in ("libyaml", "python"):
        try:
            outcomes.append(("value", bounded_yaml.load(doc, max_bytes=1_000, parser=parser)))
        except bounded_yaml.ExpansionTooLarge as err:
            outcomes.append(("too large", err.what))
        except yaml.YAMLError as err:
            problem = getattr(err, "problem", "") or ""
            outcomes.append(("error", "levels deep" in problem))
    assert outcomes[0] == outcomes[1]
