"""ECMA-262 meaning of JSON Schema patterns, on the linear-time engine."""

from __future__ import annotations

import pytest
from scorewire.core.registry import ParamError
from scorewire.regex.ecma import FLAGS, ecma_to_python
from scorewire.regex.engine import compile_user_regex

CASES = [
    # `$` is the very end: not before a final newline, as Python's `$` would allow
    (r"^abc$", "abc", True),
    (r"^abc$", "abc\n", False),
    # a `$` inside a class is a literal
    (r"^[a$]+$", "a$a", True),
    # \d, \w, \b are ASCII
    (r"^\d+$", "42", True),
    (r"^\d+$", "৪২", False),
    (r"^\w$", "é", False),
    (r"^\W$", "é", True),
    (r"\bcat\b", "a cat!", True),
    # \s and \S know ECMA's Unicode white space, in and out of classes
    (r"^\s$", "\ufeff", True),
    (r"^\s$", "\xa0", True),
    (r"^\S$", "\u2028", False),
    (r"^[\s]$", "\u3000", True),
    # control escapes
    (r"^\cC$", "\x03", True),
    # property escapes by their long names
    (r"\p{Letter}cole", "l'école", True),
    (r"^\p{digit}+$", "৪২", True),
    (r"^\P{Letter}+$", "42", True),
    (r"^\p{Script=Greek}+$", "αβγ", True),
    (r"^\p{gc=Lu}+$", "ÉCOLE", True),
]


@pytest.mark.parametrize(("pattern", "text", "found"), CASES)
def test_schema_patterns_have_the_ecma_meaning(pattern: str, text: str, found: bool) -> None:
    rx = compile_user_regex(ecma_to_python(pattern), FLAGS, "pattern")
    assert rx.search(text) is found


def test_non_white_space_inside_a_class_is_a_load_error() -> None:
    # \S cannot be written as a class member: refused, naming the field
    with pytest.raises(ParamError) as err:
        ecma_to_python(r"[\S]", "schema.pattern")
    assert err.value.field == "schema.pattern"
