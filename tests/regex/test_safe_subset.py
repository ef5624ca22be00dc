"""The safe regular-expression subset: what it means, what it rejects, and its limits."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.regex.safe_subset import (
    MAX_ALTERNATIVES,
    MAX_COUNT,
    MAX_NESTING,
    MAX_PATTERN_CHARS,
    MAX_STATES,
    UnsafePatternError,
    compile_safe_regex,
    parse_safe_regex,
)

# --- meaning ------------------------------------------------------------------------

MATCHES = [
    # (rule, pattern, text, matches)
    ("substring search finds a match anywhere", "OK", "say OK now", True),
    ("matching is case sensitive", "OK", "ok", False),
    ("^ anchors the start of the answer", "^OK", "xOK", False),
    ("^ anchors only the start of the answer, not of a line", "^OK", "x\nOK", False),
    ("$ anchors the very end", "OK$", "OK", True),
    ("$ does not match before a trailing newline", "OK$", "OK\n", False),
    ("$ anchors only the end of the answer, not of a line", "OK$", "OK\nx", False),
    ("^...$ is the whole answer", "^OK: [0-9]{1,3}$", "OK: 123", True),
    ("^...$ rejects extra digits", "^OK: [0-9]{1,3}$", "OK: 1234", False),
    ("dot matches an ordinary character", "a.c", "abc", True),
    ("dot matches a non-ASCII code point", "a.c", "aéc", True),
    ("dot matches an astral code point as one", "^.$", "😀", True),
    ("dot excludes \\n", "a.c", "a\nc", False),
    ("dot excludes \\r", "a.c", "a\rc", False),
    ("a negated class matches a line break", "a[^x]c", "a\nc", True),
    ("a negated class excludes its members", "a[^b]c", "abc", False),
    ("\\d is an ASCII digit", r"^\d$", "7", True),
    ("\\d excludes non-ASCII digits", r"^\d$", "٣", False),
    ("\\w is ASCII letters, digits and _", r"^\w+$", "a_Z9", True),
    ("\\w excludes non-ASCII letters", r"^\w$", "é", False),
    ("\\s is ASCII white space including \\v", r"^\s+$", " \t\n\r\x0b\x0c", True),
    ("\\s excludes a non-breaking space", r"^\s$", "\xa0", False),
    ("\\n \\r \\t are the control characters", r"^\n\r\t$", "\n\r\t", True),
    (
        "escaped punctuation is literal",
        r"^\.\*\+\?\(\)\[\]\{\}\|\\\^\$\-\/$",
        r".*+?()[]{}|\^$-/",
        True,
    ),
    ("an escaped dot is not a wildcard", r"a\.c", "abc", False),
    ("a range matches inside it", "^[a-c]$", "b", True),
    ("a range excludes outside it", "^[a-c]$", "d", False),
    ("- at the end of a class is literal", "^[a-]$", "-", True),
    ("^ not first in a class is literal", "^[a^]$", "^", True),
    ("\\d inside a class", r"^[\d_]$", "_", True),
    ("escaped ] inside a class", r"^[\]]$", "]", True),
    ("alternation picks either branch", "^(cat|dog)$", "dog", True),
    ("top-level alternation", "cat|dog", "hotdog", True),
    ("an empty alternative matches the empty string", "^(a|)$", "", True),
    ("a non-capturing group is a group", "^(?:ab)+$", "abab", True),
    ("? makes optional", "^colou?r$", "color", True),
    ("* allows none", "^ab*c$", "ac", True),
    ("+ requires one", "^ab+c$", "ac", False),
    ("{m} is exact", "^a{3}$", "aaa", True),
    ("{m} rejects more", "^a{3}$", "aaaa", False),
    ("{m,n} accepts its upper bound", "^a{2,3}$", "aaa", True),
    ("{m,} accepts any number more", "^a{2,}$", "a" * 40, True),
    ("{m,} rejects fewer", "^a{2,}$", "a", False),
    ("{0} matches the empty string", "^a{0}$", "", True),
    ("a quantified group with alternatives", "^(ab|c){2}$", "cab", True),
    ("non-ASCII literals", "^naïve$", "naïve", True),
    ("a lone surrogate in the text never raises", "a", "\ud800a", True),
]


@pytest.mark.parametrize(
    ("rule", "pattern", "text", "expected"), MATCHES, ids=[m[0] for m in MATCHES]
)
def test_meaning(rule: str, pattern: str, text: str, expected: bool) -> None:
    assert compile_safe_regex(pattern).search(text) is expected


def test_dollar_compiles_to_end_of_text() -> None:
    # $ must mean end of text for RE2, not "before a final newline"
    assert parse_safe_regex("a$")[0] == "a\\z"
    assert parse_safe_regex("^a")[0] == "\\Aa"


def test_pathological_pattern_in_the_subset_answers_at_once() -> None:
    # the subset's closest cousin of (a+)+$ runs in linear time on RE2
    rx = compile_safe_regex("(a|aa)*$")
    assert rx.search("a" * 50_000 + "!") is True  # the empty match at the end
    rx = compile_safe_regex("^(a|aa)*$")
    assert rx.search("a" * 50_000 + "!") is False


def test_the_classic_pathological_pattern_is_rejected() -> None:
    # (a+)+$ is nested repetition
    with pytest.raises(UnsafePatternError, match="nested repetition"):
        compile_safe_regex("(a+)+$")


# --- rejected constructs --------------------------------------------------------------

REJECTED = [
    # (rule, pattern, message fragment)
    ("empty pattern", "", "empty"),
    ("inline flag", "(?i)ok", "flags"),
    ("scoped inline flag", "(?i:ok)", "flags"),
    ("dot-all flag", "(?s).", "flags"),
    ("negative flag", "(?-i)a", "flags"),
    ("lookahead", "a(?=b)", "lookarounds"),
    ("negative lookahead", "a(?!b)", "lookarounds"),
    ("lookbehind", "(?<=a)b", "lookarounds"),
    ("negative lookbehind", "(?<!a)b", "lookarounds"),
    ("numbered backreference", r"(a)\1", "backreferences"),
    ("named backreference (Python)", "(?P<x>a)(?P=x)", "named groups"),
    ("backreference (?P=", "(?P=x)", "backreferences"),
    ("named backreference \\k", r"\k<x>", "backreferences"),
    ("named group", "(?P<x>a)", "named groups"),
    ("named group (?<", "(?<x>a)", "named groups"),
    ("comment group", "(?#note)a", "comments"),
    ("atomic group", "(?>a)", "atomic"),
    ("conditional group", "(?(1)a|b)", "conditional"),
    ("Unicode property", r"\p{L}", "Unicode-property"),
    ("negated Unicode property", r"\P{L}", "Unicode-property"),
    ("Unicode property inside a class", r"[\p{L}]", "Unicode-property"),
    ("nested repetition (a+)+", "(a+)+", "nested repetition"),
    ("nested repetition (a*)*", "(a*)*", "nested repetition"),
    ("nested repetition with ?", "(ab?)*", "nested repetition"),
    ("nested repetition deep inside", "((a+)b){2}", "nested repetition"),
    ("nested repetition of a count", "(a{2})+", "nested repetition"),
    ("nested repetition inside alternatives", "(a|b+)?", "nested repetition"),
    ("a quantifier after a quantifier", "a**", "nested repetition"),
    ("a count after a count", "a{2}{3}", "nested repetition"),
    ("a star after a count", "a{2}*", "nested repetition"),
    ("lazy quantifier", "a*?", "lazy"),
    ("lazy count", "a{1,2}?", "lazy"),
    ("possessive quantifier", "a++", "possessive"),
    ("nothing to repeat", "*a", "nothing to repeat"),
    ("nothing to repeat after |", "a|*", "nothing to repeat"),
    ("nothing to repeat in a group", "(+)", "nothing to repeat"),
    ("a count with nothing before it", "{2}", "nothing to repeat"),
    ("a repeated start anchor", "^*a", "anchor"),
    ("a repeated end anchor", "a$?", "anchor"),
    ("word boundary", r"\bword", "anchor \\b"),
    ("\\A", r"\Aa", "anchor \\A"),
    ("\\Z", r"a\Z", "anchor \\Z"),
    ("\\z", r"a\z", "anchor \\z"),
    ("\\D", r"\D", "[^\\d]"),
    ("\\W", r"\W", "[^\\w]"),
    ("\\S", r"\S", "[^\\s]"),
    ("hex escape", r"\x41", "unsupported escape"),
    ("unicode escape", r"\u0041", "unsupported escape"),
    ("octal escape", r"\0", "unsupported escape"),
    ("escaped letter", r"\q", "unsupported escape"),
    ("escaped space", r"\ ", "unsupported escape"),
    ("\\b inside a class", r"[\b]", "unsupported escape"),
    ("a lone trailing backslash", "a\\", "lone backslash"),
    ("unclosed group", "(a", "missing ')'"),
    ("unopened group", "a)", "unbalanced ')'"),
    ("unclosed class", "[a", "missing ']'"),
    ("empty class", "[]", "empty character class"),
    ("empty negated class", "[^]", "empty character class"),
    ("a bare ]", "a]", "escaped as \\]"),
    ("a bare {", "a{", "malformed count"),
    ("a bare { with text", "{x}", "escaped as \\{"),
    ("a bare }", "a}", "escaped as \\}"),
    ("a count without lower bound", "a{,3}", "lower bound"),
    ("a count with a space", "a{1, 3}", "malformed count"),
    ("out-of-order range", "[z-a]", "out of order"),
    ("a range from a class escape", r"[\d-z]", "cannot start or end"),
    ("a range to a class escape", r"[a-\w]", "cannot start or end"),
    ("POSIX class", "[[:alpha:]]", "POSIX"),
    ("a [ inside a class", "[a[]", "POSIX"),
    ("count minimum above maximum", "a{3,2}", "minimum above its maximum"),
    ("a lone surrogate in the pattern", "a\ud800", "surrogate"),
]


@pytest.mark.parametrize(("rule", "pattern", "fragment"), REJECTED, ids=[r[0] for r in REJECTED])
def test_rejected_construct(rule: str, pattern: str, fragment: str) -> None:
    with pytest.raises(UnsafePatternError) as info:
        compile_safe_regex(pattern)
    assert fragment in info.value.message


# --- limits, at and just past each boundary -----------------------------------------

_NEST_8 = "(" * MAX_NESTING + "a" + ")" * MAX_NESTING
_NEST_9 = "(" * (MAX_NESTING + 1) + "a" + ")" * (MAX_NESTING + 1)
_ALT_16 = "|".join("abcdefghijklmnop")
_ALT_17 = "|".join("abcdefghijklmnopq")
_LONG_256 = "[ab]" * 64  # 256 characters, 65 states
_STATES_128 = "a{32}a{32}a{32}a{31}"  # 127 states and the match state
_STATES_129 = "a{32}a{32}a{32}a{32}"

LIMITS = [
    # (rule, pattern, accepted, fragment naming the limit when rejected)
    ("256 characters is accepted", _LONG_256, True, ""),
    ("257 characters is rejected", _LONG_256 + "a", False, "limit is 256 characters"),
    ("8 nesting levels are accepted", _NEST_8, True, ""),
    ("9 nesting levels are rejected", _NEST_9, False, "limit is 8 nesting levels"),
    ("(?: groups count as nesting", "(?:" * 9 + "a" + ")" * 9, False, "8 nesting levels"),
    ("16 alternatives are accepted", _ALT_16, True, ""),
    ("17 alternatives are rejected", _ALT_17, False, "limit is 16 alternatives"),
    ("17 alternatives in a group are rejected", f"x({_ALT_17})", False, "16 alternatives"),
    ("16 alternatives in each of two groups are accepted", f"({_ALT_16})({_ALT_16})", True, ""),
    ("a count of 32 is accepted", "a{32}", True, ""),
    ("a count of 33 is rejected", "a{33}", False, "counts go up to 32"),
    ("an upper count of 33 is rejected", "a{0,33}", False, "counts go up to 32"),
    ("a lower count of 33 with no upper is rejected", "a{33,}", False, "counts go up to 32"),
    ("a huge count is rejected, not overflowed", "a{99999999999999999999}", False, "up to 32"),
    ("128 compiled states are accepted", _STATES_128, True, ""),
    ("129 compiled states are rejected", _STATES_129, False, "limit is 128 compiled states"),
    ("bounded counts are expanded into states", "(?:abcde){26}", False, "compiled states"),
]


@pytest.mark.parametrize(
    ("rule", "pattern", "accepted", "fragment"), LIMITS, ids=[x[0] for x in LIMITS]
)
def test_limit(rule: str, pattern: str, accepted: bool, fragment: str) -> None:
    if accepted:
        compile_safe_regex(pattern)
        return
    with pytest.raises(UnsafePatternError) as info:
        compile_safe_regex(pattern)
    assert fragment in info.value.message


STATES = [
    # (rule, pattern, compiled states incl. the match state)
    ("one per literal plus the match state", "abc", 4),
    ("the seed's example", "^OK: [0-9]{1,3}$", 12),
    ("a class or a dot is one state", "[a-z].", 3),
    ("? * + add one split each", "a?b*c+", 7),
    ("+ is the body and a split back", "(ab)+", 4),
    ("{m,n} is m copies and n-m optional copies", "a{2,4}", 7),
    ("{m,} is m copies, the last looping back", "a{2,}", 4),
    ("{0,} is a star", "a{0,}", 3),
    ("an alternation adds a split per extra branch", "a|b|c", 6),
    ("a group adds no state", "(ab)", 3),
]


@pytest.mark.parametrize(("rule", "pattern", "states"), STATES, ids=[s[0] for s in STATES])
def test_compiled_states(rule: str, pattern: str, states: int) -> None:
    assert compile_safe_regex(pattern).states == states


def test_limit_constants_are_the_seeds() -> None:
    # the seed's numbers, so a change to them is deliberate
    assert (MAX_PATTERN_CHARS, MAX_NESTING, MAX_ALTERNATIVES, MAX_COUNT, MAX_STATES) == (
        256,
        8,
        16,
        32,
        128,
    )


# --- properties -----------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_accepted_or_rejected_cleanly(pattern: str) -> None:
    # the parser never fails with anything but UnsafePatternError
    try:
        rx = compile_safe_regex(pattern)
    except UnsafePatternError as err:
        assert err.message
        return
    rx.search(pattern)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab()[]{}|*+?.^$\\-,0123456789dwsnrtp:=!<", max_size=40))
def test_metacharacter_soup_is_accepted_or_rejected_cleanly(pattern: str) -> None:
    # dense metacharacters reach every error branch of the parser
    try:
        compile_safe_regex(pattern)
    except UnsafePatternError as err:
        assert err.message


# Each generated piece is (subset pattern, equivalent Python pattern, has a quantifier,
# is an anchor). The Python side is written independently of the translator: `$` is
# Python's \Z, `^` is \A, dot excludes \r too, and re.ASCII gives \d \w \s their
# ASCII meaning.
_ATOMS = [
    ("a", "a"),
    ("b", "b"),
    ("é", "é"),
    (".", "[^\\n\\r]"),
    ("\\d", "\\d"),
    ("\\w", "\\w"),
    ("\\s", "\\s"),
    ("\\n", "\\n"),
    ("\\r", "\\r"),
    ("\\t", "\\t"),
    ("\\.", "\\."),
    ("\\-", "\\-"),
    ("[a-c]", "[a-c]"),
    ("[^a\\n]", "[^a\\n]"),
    ("[\\d_]", "[\\d_]"),
    ("[^\\s]", "[^\\s]"),
]
_ANCHORS = [("^", "\\A"), ("$", "\\Z")]
_QUANTIFIERS = ["?", "*", "+", "{0}", "{2}", "{1,2}", "{0,3}", "{2,}"]

Piece = tuple[str, str, bool, bool]


def _atom() -> st.SearchStrategy[Piece]:
    return st.sampled_from(_ATOMS).map(lambda p: (p[0], p[1], False, False))


def _anchor() -> st.SearchStrategy[Piece]:
    return st.sampled_from(_ANCHORS).map(lambda p: (p[0], p[1], False, True))


def _extend(inner: st.SearchStrategy[Piece]) -> st.SearchStrategy[Piece]:
    def concat(parts: list[Piece]) -> Piece:
        if len(parts) == 1:
            return parts[0]
        return (
            "".join(p[0] for p in parts),
            "".join(p[1] for p in parts),
            any(p[2] for p in parts),
            False,
        )

    def group(branches: list[Piece]) -> Piece:
        return (
            "(" + "|".join(b[0] for b in branches) + ")",
            "(?:" + "|".join(b[1] for b in branches) + ")",
            any(b[2] for b in branches),
            False,
        )

    def quantify(piece: Piece, q: str) -> Piece:
        if piece[2]:
            return piece  # nested repetition is outside the subset
        return (f"({piece[0]}){q}", f"(?:{piece[1]}){q}", True, False)

    def quantify_atom(atom: Piece, q: str) -> Piece:
        return (atom[0] + q, atom[1] + q, True, False)

    seq = st.lists(inner, min_size=1, max_size=3).map(concat)
    grp = st.lists(seq, min_size=1, max_size=3).map(group)
    return st.one_of(
        seq,
        grp,
        st.tuples(inner, st.sampled_from(_QUANTIFIERS)).map(lambda t: quantify(*t)),
        st.tuples(_atom(), st.sampled_from(_QUANTIFIERS)).map(lambda t: quantify_atom(*t)),
    )


def _depth(pattern: str) -> int:
    """How deep groups nest (no generated atom holds a parenthesis)."""
    depth = deepest = 0
    for ch in pattern:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    return deepest


# Within every limit of the subset by construction: at most 8 leaves, each repeated at
# most 3 times (no nested repetition), is far under MAX_STATES and MAX_ALTERNATIVES; the
# filter keeps nesting within MAX_NESTING. So every generated pattern must be accepted.
_PATTERNS = st.recursive(st.one_of(_atom(), _anchor()), _extend, max_leaves=8).filter(
    lambda piece: _depth(piece[0]) <= MAX_NESTING
)


@settings(max_examples=200, deadline=None)
@given(_PATTERNS, st.text(alphabet="abcé5_ \t\n\r\x0b.-x", max_size=16))
def test_generated_safe_patterns_agree_with_python_re(piece: Piece, text: str) -> None:
    # the subset's meaning is Python's, with $ as \Z, dot excluding \r, and ASCII classes
    pattern, python_pattern, _, _ = piece
    rx = compile_safe_regex(pattern)  # a valid pattern is accepted, not just rejected cleanly
    expected = re.search(python_pattern, text, re.ASCII) is not None
    assert rx.search(text) is expected, (pattern, rx.re2_pattern, python_pattern, text)
