"""Differential property: random patterns and Unicode texts, answered as Python's `re` does.

Patterns come from a small grammar of what the engine supports (literals including
non-ASCII ones, classes, `\\w \\d \\s \\b \\B`, anchors, groups, alternation, bounded and
unbounded repetition, VERBOSE white space and comments), under every supported flag
combination. Python's `re` is the oracle; it only ever sees these small generated patterns
on short texts, never a user's. The checks use `search` only, so `search` is what agrees.
"""

from __future__ import annotations

import re
import warnings

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scorewire.core.registry import ParamError
from scorewire.regex.engine import compile_user_regex

# Characters whose word-ness, case or width trip engines up: a combining acute (not a
# word character for Python), connector punctuation, a superscript two (a word character:
# numeric), a zero-width joiner, CJK, Arabic-Indic digits, the Kelvin sign, long s,
# dotless and dotted i, the ypogegrammeni and iota, a no-break space, a newline, and lone
# surrogates (JSON-decoded text can hold them; they are non-word characters to Python).
ALPHABET = (
    "abcAB_ 1-.\n\u00e9\u00c9\u0301\u203f\u00b2\u200d\u65e5\u672c\u0661\u212aks"
    "\u017f\u0131\u0130i\u0345\u03b9\u00a0\x1c\ud800\udfff"
)

_LITERALS = ["a", "b", "c", "A", "k", "s", "i", "_", "1", "\u00e9", "\u65e5", "\u0301",
             "\u00b2", "\u212a", "\u0131", r"\.", r"\n", "-", r"\u00e9", " "]  # fmt: skip
_CLASSES = [
    "[a-c]", "[^a]", "[\\w-]", "[^\\W_]", "[\u00e9\u00c9]", "[\\s.]", "[^\\s]", "[0-9]",
    "[\\d\u00b2]", "[k-s]", "[^\\n]", "[_\u203f]",
]  # fmt: skip
_ESCAPES = [r"\w", r"\W", r"\d", r"\D", r"\s", r"\S", "."]
_ANCHORS = [r"\b", r"\B", "^", "$", r"\A", r"\Z"]
_QUANTIFIERS = ["*", "+", "?", "{2}", "{1,3}", "{,2}", "{2,}", "*?", "+?", "??"]
# Under VERBOSE these vanish; otherwise they are literal text.
_VERBOSE_NOISE = [" ", "  ", "# note\n"]

_ATOM = st.one_of(
    st.sampled_from(_LITERALS),
    st.sampled_from(_CLASSES),
    st.sampled_from(_ESCAPES),
    st.sampled_from(_ANCHORS),
)


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    group = st.builds(lambda body, kind: f"{kind}{body})", children, st.sampled_from(["(", "(?:"]))
    repeated = st.builds(lambda g, q: g + q, group, st.sampled_from(_QUANTIFIERS))
    concat = st.lists(children, min_size=2, max_size=4).map("".join)
    alternation = st.lists(children, min_size=2, max_size=3).map("|".join)
    atom_repeated = st.builds(lambda a, q: a + q, _ATOM, st.sampled_from(_QUANTIFIERS))
    noisy = st.builds(lambda a, n: a + n, children, st.sampled_from(_VERBOSE_NOISE))
    return st.one_of(group, repeated, concat, alternation, atom_repeated, noisy)


_ANY = st.recursive(_ATOM, _extend, max_leaves=8)
# Half the patterns are built around an assertion, the part that needs the most care.
PATTERNS = st.one_of(
    _ANY,
    st.builds(lambda a, z, b: a + z + b, _ANY, st.sampled_from([r"\b", r"\B", "$"]), _ANY),
)

# Every combination of IGNORECASE, MULTILINE, DOTALL, VERBOSE, and ASCII or UNICODE.
FLAG_SETS = [
    i | m | s | x | a
    for i in (0, re.IGNORECASE)
    for m in (0, re.MULTILINE)
    for s in (0, re.DOTALL)
    for x in (0, re.VERBOSE)
    for a in (0, re.ASCII, re.UNICODE)
]

# The only refusals a pattern of this grammar may meet (Python accepts them all).
ALLOWED_REFUSALS = (
    "more than 8 times",
    "at most 8 ({8,})",
    "negated character class",
    "too large",
)


def _oracle(pattern: str, flags: int) -> re.Pattern[str] | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(pattern, flags)
    except re.error:
        return None


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow],
)
@given(
    pattern=PATTERNS,
    flags=st.sampled_from(FLAG_SETS),
    texts=st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=1, max_size=6),
)
def test_search_agrees_with_python_re(pattern: str, flags: int, texts: list[str]) -> None:
    # Whatever Python accepts, the engine accepts (bar the named limits) and answers alike.
    oracle = _oracle(pattern, flags)
    if oracle is None:
        return
    try:
        rx = compile_user_regex(pattern, flags)
    except ParamError as err:
        assert any(reason in err.message for reason in ALLOWED_REFUSALS), (pattern, flags, err)
        return
    for text in texts:
        want = oracle.search(text) is not None
        assert rx.search(text) is want, (pattern, flags, text, rx.translated[:200])
