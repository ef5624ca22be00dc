"""Quantifiers: `*`, `+`, `?` and counts `{m}`, `{m,}`, `{,n}`, `{m,n}`, as Python reads them.

`x{,n}` is `x{0,n}` (RE2 would read it as literal text) and a `{` that does not start a
count is a literal. A lazy quantifier gives the same yes/no answer and is kept; a
possessive one, a quantifier on a quantifier and counts over RE2's limit are refused.
"""

from __future__ import annotations

from scorewire.regex.reader import PatternReader

MAX_REPEAT = 1000
"""RE2's largest repeat count in `{m,n}`; Python allows far more, RE2 refuses the pattern."""

_BOUNDS = {"*": (0, None), "+": (1, None), "?": (0, 1)}


def read_quantifier(r: PatternReader) -> None:
    """A `*`, `+` or `?` at the reader's position."""
    c = r.p[r.i]
    _no_repeat_of_repeat(r)
    tok = r.emit("quant", c)
    tok.lo, tok.hi = _BOUNDS[c]
    r.i += 1
    _after_quantifier(r)


def read_count(r: PatternReader) -> bool:
    """`{m}`, `{m,}`, `{,n}`, `{m,n}` as Python reads them; False when `{` is literal."""
    p, j = r.p, r.i + 1
    lo_start = j
    while j < len(p) and p[j].isdigit() and p[j].isascii():
        j += 1
    lo = hi = p[lo_start:j]
    comma = j < len(p) and p[j] == ","
    if comma:
        j += 1
        hi_start = j
        while j < len(p) and p[j].isdigit() and p[j].isascii():
            j += 1
        hi = p[hi_start:j]
    if j >= len(p) or p[j] != "}" or not (lo or comma):
        return False
    low = int(lo) if lo else 0
    high = int(hi) if hi else None
    for count in (low, high):
        if count is not None and count > MAX_REPEAT:
            raise r.fail(
                f"repeat count {count} is over the linear-time engine's limit of {MAX_REPEAT}"
            )
    if high is not None and high < low:
        raise r.fail("min repeat greater than max repeat")
    text = f"{{{low},{'' if high is None else high}}}" if comma else f"{{{low}}}"
    _no_repeat_of_repeat(r)
    tok = r.emit("quant", text)
    tok.lo, tok.hi = low, high
    r.i = j + 1
    _after_quantifier(r)
    return True


def _after_quantifier(r: PatternReader) -> None:
    if r.i < len(r.p) and r.p[r.i] == "?":
        r.out[-1].text += "?"  # lazy: the same yes/no answer, kept for RE2
        r.i += 1
    if r.i < len(r.p) and r.p[r.i] == "+":
        raise r.fail("possessive quantifiers (*+, ++, ?+, {m,n}+) are not supported")


def _no_repeat_of_repeat(r: PatternReader) -> None:
    # Python refuses `a* ?` under VERBOSE and `a*(?#c)*` ("multiple repeat"); RE2 would
    # read the first as a lazy `a*?`.
    if r.out and r.out[-1].kind == "quant":
        raise r.fail("multiple repeat")
