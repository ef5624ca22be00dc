"""User regexes on RE2 with Python `re` semantics: parity, refusals, flags, speed guard.

Python's `re` appears here only as the test oracle, on short fixed inputs.
"""

from __future__ import annotations

import re
import warnings

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scorewire.core.registry import ParamError
from scorewire.regex import engine as regex_engine
from scorewire.regex.engine import UserRegex, compile_user_regex


def test_flag_constants_are_python_re_bits() -> None:
    # The catalog's flags integer is Python's re flag bits; our constants must equal them.
    assert re.IGNORECASE.value == regex_engine.IGNORECASE
    assert re.MULTILINE.value == regex_engine.MULTILINE
    assert re.DOTALL.value == regex_engine.DOTALL
    assert re.UNICODE.value == regex_engine.UNICODE
    assert re.ASCII.value == regex_engine.ASCII
    assert re.VERBOSE.value == regex_engine.VERBOSE
    assert re.LOCALE.value == regex_engine.LOCALE
    assert re.DEBUG.value == regex_engine.DEBUG


# (pattern, flags, text, Python's answer). Each row is also checked against `re` itself.
PARITY = [
    # substring search, not a full match
    ("Paris", 0, "The capital is Paris.", True),
    # ^ anchors at the start of the text only
    ("^Paris", 0, "The capital is Paris.", False),
    # Python's $ also matches before a final newline
    ("^OK$", 0, "OK\n", True),
    # ... but not before other newlines
    ("^OK$", 0, "OK\n\n", False),
    # $ at the end of each alternative
    ("yes$|^no", 0, "say yes\n", True),
    # \Z is the very end (RE2 spells it \z)
    (r"OK\Z", 0, "OK\n", False),
    (r"OK\Z", 0, "OK", True),
    # MULTILINE: ^ and $ at line boundaries
    ("^b$", re.MULTILINE, "a\nb\nc", True),
    ("^b$", 0, "a\nb\nc", False),
    # DOTALL: dot crosses newlines only with the flag
    ("a.b", 0, "a\nb", False),
    ("a.b", re.DOTALL, "a\nb", True),
    # IGNORECASE
    ("paris", re.IGNORECASE, "PARIS", True),
    ("paris", 0, "PARIS", False),
    # Unicode case folding: long s folds to s, Kelvin sign to k
    ("s", re.IGNORECASE, "\u017f", True),
    ("k", re.IGNORECASE, "\u212a", True),
    # Python treats I, i, dotted İ and dotless ı as one class; RE2 does not by itself
    ("i", re.IGNORECASE, "\u0131", True),
    ("I", re.IGNORECASE, "\u0130", True),
    ("[i]", re.IGNORECASE, "\u0130", True),
    # ASCII|IGNORECASE folds only ASCII letters
    ("k", re.IGNORECASE | re.ASCII, "\u212a", False),
    ("s", re.IGNORECASE | re.ASCII, "S", True),
    ("[a-z]", re.IGNORECASE | re.ASCII, "\u017f", False),
    ("\u00e9", re.IGNORECASE | re.ASCII, "\u00c9", False),
    # \d is Unicode in Python (Arabic-Indic digits), ASCII with re.ASCII
    (r"^\d+$", 0, "\u0661\u0662\u0663", True),
    (r"^\d+$", re.ASCII, "\u0661\u0662\u0663", False),
    # \w is Unicode in Python
    (r"^\w+$", 0, "caf\u00e9", True),
    (r"^\w+$", re.ASCII, "caf\u00e9", False),
    # \s: Python includes \v and no-break space; RE2's own \s has neither
    (r"\s", 0, "\x0b", True),
    (r"\s", 0, "\u00a0", True),
    (r"\s", re.ASCII, "\x0b", True),
    (r"\s", re.ASCII, "\u00a0", False),
    # \w-style classes are not case-folded under IGNORECASE
    (r"\W", re.IGNORECASE, "\u03b9", False),
    # x{,n} is x{0,n} in Python, literal text in RE2
    ("^a{,2}b$", 0, "aab", True),
    ("^a{,2}b$", 0, "a{,2}b", False),
    # { that is not a repeat is a literal
    ("x{}", 0, "x{}", True),
    ("a{1", 0, "a{1", True),
    # [ inside a class is a literal (RE2 would read a POSIX class)
    ("[[:alpha:]]", 0, "x", False),
    ("[[:alpha:]]", 0, ":]", True),
    # ] first in a class is a literal
    ("[]a]", 0, "]", True),
    # RE2 would fold [sS]|[bB] into a class matching long s; Python does not
    ("[sS]|[bB]", 0, "\u017f", False),
    ("[kK]|x", 0, "\u212a", False),
    # escapes: hex, \u, \N{...}, octal, backspace in a class
    (r"\x41", 0, "A", True),
    (r"\u00e9", 0, "\u00e9", True),
    (r"\N{LATIN SMALL LETTER E WITH ACUTE}", 0, "\u00e9", True),
    (r"\101", 0, "A", True),
    (r"[\b]", 0, "\x08", True),
    # comments vanish; a quantifier after one applies to the atom before it
    ("a(?#note)*b", 0, "b", True),
    # named groups and lazy quantifiers
    ("(?P<word>ab)+?c", 0, "ababc", True),
    # inline global and scoped flags
    ("(?i)paris", 0, "PARIS", True),
    ("(?i:p)aris", 0, "Paris", True),
    ("(?i:p)aris", 0, "PARIS", False),
    ("(?-i:p)aris", re.IGNORECASE, "pARIS", True),
    ("(?-i:p)aris", re.IGNORECASE, "Paris", False),
    # (?a) switches \w to ASCII
    (r"(?a)^\w+$", 0, "caf\u00e9", False),
    # \b with re.ASCII is exact
    (r"\bcat\b", re.ASCII, "a cat!", True),
    (r"\bcat\b", re.ASCII, "concatenate", False),
    # issue 14 defect 3: ASCII \B never matches between the bytes of one character
    (r"\B", re.ASCII, "a\u00e9b", False),
    (r"\B", re.ASCII, "a\u65e5b", False),
    (r"x|\B", re.ASCII, "\u65e5\u672c", True),
    (r"\B\Z", re.ASCII, "a\u00e9", True),
    (r"\B\Z", re.ASCII, "ab", False),
    # \b without re.ASCII is Python's Unicode word boundary
    (r"\bcat\b", 0, "a cat!", True),
    (r"\bcat\b", 0, "concatenate", False),
    (r"\bcaf\u00e9\b", 0, "un caf\u00e9.", True),
    (r"\bcaf\u00e9\b", 0, "caf\u00e9s", False),
    # a combining accent is not a word character for Python (Rust's regex says it is)
    (r"\bcafe\b", 0, "cafe\u0301", True),
    # a superscript two is (numeric); connector punctuation other than _ is not
    (r"\b2\b", 0, "2\u00b2", False),
    (r"\bx\b", 0, "x\u203f", True),
    (r"\b\u65e5", 0, "\u672c\u65e5", False),
    (r"\B\u65e5", 0, "\u672c\u65e5", True),
    # ASCII \b inside (?a:...) beside a Unicode one
    (r"(?a:\b)\u00e9\b", 0, "a\u00e9", True),
    # a group holding \b repeated without bound (an automaton over the iterations)
    (r"(\bab)+", 0, "abab", True),
    (r"(?:\bab)+c", 0, "xabc", False),
    (r"^(?:\w+\b\W*)+$", 0, "h\u00e9, wo!", True),
    (r"^(?:\b\w+\b[ ,]*)+$", 0, "one, two three", True),
    (r"(?:\B.)+x", 0, "ax", False),
    (r"(?:a\n?$)+", 0, "a\n", True),
    # Python's \B never matches the empty text
    (r"\B", 0, "", False),
    (r"\b", 0, "", False),
    # $ anywhere: also just before a final newline, outside MULTILINE
    ("(a$)?b", 0, "b", True),
    ("(?:a$|b)c", 0, "bc", True),
    ("(?:a$|b)c", 0, "a\nc", False),
    ("a$(?#c)", 0, "a\n", True),
    ("a$\n", 0, "a\n", True),
    ("a$\n", 0, "a\n\n", False),
    ("a$\n$", 0, "a\n", True),
    ("a$|$b", 0, "xa\n", True),
    (r"a$\b", 0, "a", True),
    # VERBOSE: white space and comments vanish outside classes, stay inside them
    ("a b  # comment", re.VERBOSE, "ab", True),
    ("a b", re.VERBOSE, "a b", False),
    ("[ ]x", re.VERBOSE, " x", True),
    (r"a\ b", re.VERBOSE, "a b", True),
    ("(?x) a + b", 0, "aab", True),
    ("(?x: a b )c d", 0, "abc d", True),
    ("a # comment\n | b", re.VERBOSE, "b", True),
    # a negated class of uncased members with a category under IGNORECASE
    (r"^[^\W\d_]+$", re.IGNORECASE, "Caf\u00e9", True),
    (r"^[^\W\d_]+$", re.IGNORECASE, "a_b", False),
    # empty pattern matches everything (the regex check refuses it separately)
    ("", 0, "anything", True),
]


@pytest.mark.parametrize(("pattern", "flags", "text", "want"), PARITY)
def test_search_equals_python_re(pattern: str, flags: int, text: str, want: bool) -> None:
    # The table is pinned, and must agree with Python's own engine.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        assert (re.search(pattern, text, flags) is not None) == want
    assert compile_user_regex(pattern, flags).search(text) is want


# (pattern, flags, field, fragment of the message)
REFUSED = [
    ("(?=a)", 0, "pattern", "lookahead"),
    ("(?!a)", 0, "pattern", "lookahead"),
    ("(?<=a)b", 0, "pattern", "lookbehind"),
    ("(?<!a)b", 0, "pattern", "lookbehind"),
    (r"(a)\1", 0, "pattern", "backreference"),
    ("(?P<x>a)(?P=x)", 0, "pattern", "backreference"),
    ("(?>a)", 0, "pattern", "atomic"),
    ("a*+", 0, "pattern", "possessive"),
    ("a{2,3}+", 0, "pattern", "possessive"),
    ("(a)?(?(1)b|c)", 0, "pattern", "conditional"),
    (r"(?:\bab){9,}", 0, "pattern", "at most 8 ({8,})"),
    (r"(?:a$){9}", 0, "pattern", "more than 8 times"),
    (r"\p{L}\b", 0, "pattern", "Unicode property"),
    # the rewrite grows with each assertion beside a part that may be empty: bounded early
    (r"(?:\w*\b\s*){4}", 0, "pattern", "too large once its \\b, \\B or $ are rewritten"),
    ("a{1001}", 0, "pattern", "limit of 1000"),
    ("a{2,5000}", 0, "pattern", "limit of 1000"),
    ("a{3,2}", 0, "pattern", "min repeat greater than max repeat"),
    ("(?L)a", 0, "pattern", "re.LOCALE"),
    ("a(?i)b", 0, "pattern", "global flags not at the start"),
    ("(a", 0, "pattern", "missing )"),
    ("a)", 0, "pattern", "unbalanced parenthesis"),
    ("[a", 0, "pattern", "unterminated character set"),
    (r"\q", 0, "pattern", "bad escape \\q"),
    ("[z-a]", 0, "pattern", "bad character range"),
    ("a**", 0, "pattern", "multiple repeat"),
    ("a* ?", re.VERBOSE, "pattern", "multiple repeat"),
    ("a{2}(?#c){3}", 0, "pattern", "multiple repeat"),
    ("*a", 0, "pattern", "nothing to repeat"),
    (r"[^\Wa]", re.IGNORECASE, "pattern", "negated character class"),
    ("a", 4, "flags", "re.LOCALE (4)"),
    ("a", 128, "flags", "re.DEBUG (128)"),
    ("a", 1, "flags", "re.TEMPLATE (1)"),
    ("a", 512, "flags", "unknown flag bits 512"),
    ("a", -2, "flags", "non-negative"),
    ("a", re.ASCII | re.UNICODE, "flags", "incompatible"),
]


@pytest.mark.parametrize(("pattern", "flags", "field", "fragment"), REFUSED)
def test_refused_at_load_naming_the_construct(
    pattern: str, flags: int, field: str, fragment: str
) -> None:
    with pytest.raises(ParamError) as info:
        compile_user_regex(pattern, flags, "pattern")
    assert info.value.field == field
    assert fragment in info.value.message
    # re2.error carries bytes; the message must be clean text
    assert "b'" not in info.value.message


def test_re2_rejection_writes_nothing_to_stderr(capfd: pytest.CaptureFixture[str]) -> None:
    # RE2 logs "E0000 ... re2.cc" per failed compile unless log_errors is off.
    with pytest.raises(ParamError):
        compile_user_regex("a**")
    assert "E0000" not in capfd.readouterr().err


def test_pathological_pattern_answers_at_once() -> None:
    # (a+)+$ is exponential on Python's re; RE2 answers in linear time.
    rx = compile_user_regex("(a+)+$")
    assert rx.search("a" * 50_000 + "!") is False
    assert rx.search("a" * 50_000) is True


def test_custom_field_names_in_errors() -> None:
    # Other users (JSON Schema patterns) pass their own field path.
    with pytest.raises(ParamError) as info:
        compile_user_regex("(?=x)", 0, "schema.properties.a.pattern")
    assert info.value.field == "schema.properties.a.pattern"
    with pytest.raises(ParamError) as info:
        compile_user_regex("x", 512, "pattern", flags_field="options.flags")
    assert info.value.field == "options.flags"


def test_lone_surrogates_in_text_do_not_crash() -> None:
    # Text decoded from JSON may hold lone surrogates; matching must still answer.
    assert compile_user_regex("a").search("\ud800a") is True


def test_fast_path_agrees_with_the_public_wrapper() -> None:
    # UserRegex calls RE2::Match directly; the public search() is the fallback.
    rx = compile_user_regex(r"caf\w", re.IGNORECASE)
    slow = UserRegex(rx.pattern, rx.flags, rx.translated, rx._public)
    slow._match = None
    for text in ["CAFÉ", "cafe", "caf", "xx café xx", ""]:
        assert rx.search(text) is slow.search(text)


_TOKENS = [
    "a", "b", "A", "i", "I", "k", "s", "\u00e9", "\u0131", "\u017f", "1", " ", "-", "_",
    r"\d", r"\w", r"\s", r"\D", r"\W", r"\S", ".", "^", "$", r"\n", "|", "(", ")", "(?:",
    "[", "]", "[^", "*", "+", "?", "{2}", "{,2}", "*?", r"\Z", "a-z", "(?i:", "(?-i:",
    "(?s:", "(?m:", "[sS]", "[kK]", r"\b", r"\B", "(?a:", "(?x:", " ", "# c\n",
]  # fmt: skip
_PREFIXES = ["", "(?i)", "(?m)", "(?s)", "(?a)", "(?ai)", "(?ims)", "(?x)", "(?xi)"]
_ALPHABET = "abAiIk\u212as\u017f\u00e9\u00c9\u0130\u0131 1_-\n.\u0345\u03b9\x0b\u0661"


@settings(
    max_examples=400,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(
    prefix=st.sampled_from(_PREFIXES),
    tokens=st.lists(st.sampled_from(_TOKENS), min_size=1, max_size=6),
    flags=st.sampled_from([0, 2, 8, 16, 256, 258, 24]),
    texts=st.lists(st.text(alphabet=_ALPHABET, max_size=6), min_size=1, max_size=8),
)
def test_any_accepted_pattern_answers_like_python(
    prefix: str, tokens: list[str], flags: int, texts: list[str]
) -> None:
    # Differential property: whatever both engines accept, they answer alike.
    pattern = prefix + "".join(tokens)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            oracle = re.compile(pattern, flags)
    except re.error:
        return
    try:
        rx = compile_user_regex(pattern, flags)
    except ParamError:
        return
    for text in texts:
        assert rx.search(text) is (oracle.search(text) is not None), (pattern, flags, text)


# (flags as written, the bits they mean)
FLAG_SPELLINGS = [
    (2, 2),
    (2.0, 2),  # a protobuf number
    (["IGNORECASE", "MULTILINE"], 10),
    (["I", "M", "S", "X", "A"], 2 | 8 | 16 | 64 | 256),
    (["ignorecase", "re.DOTALL"], 18),
    ("IGNORECASE", 2),
    ("I|M", 10),
    (["U"], 32),
    ([], 0),
]


@pytest.mark.parametrize(("flags", "bits"), FLAG_SPELLINGS)
def test_flags_by_python_name_or_bits(flags: object, bits: int) -> None:
    # Python's names, long or one-letter, any case, with or without "re.", OR-ed.
    assert regex_engine.parse_flags(flags) == bits


# (flags as written, the field reported, a fragment of the message)
BAD_FLAG_SPELLINGS = [
    (["IGNORECASE", "CASELESS"], "flags[1]", "unknown flag name 'CASELESS'"),
    ("I|Q", "flags", "unknown flag name 'Q'"),
    ([2.5], "flags[0]", "a flag must be a name"),
    (True, "flags", "integer"),
    (2.5, "flags", "integer"),
    ({"I": 1}, "flags", "integer"),
]


@pytest.mark.parametrize(("flags", "field", "fragment"), BAD_FLAG_SPELLINGS)
def test_unknown_flag_names_are_errors_naming_the_field(
    flags: object, field: str, fragment: str
) -> None:
    with pytest.raises(ParamError) as info:
        regex_engine.parse_flags(flags, "flags")
    assert info.value.field == field
    assert fragment in info.value.message
