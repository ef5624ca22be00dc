"""Character classes (`[a-z\\d]`, `[^...]`), as Python reads them, written for RE2.

A `[` inside a class is a literal (RE2 would read `[[:alpha:]]` as a POSIX class) and
`\\b` a backspace. Under IGNORECASE the members are folded as Python folds them: by hand
under `re.ASCII`, the `I i İ ı` family written out under Unicode, and `\\d \\w \\s`
members never folded. Each class also records its exact code-point set, for a pattern
rebuilt around an assertion.
"""

from __future__ import annotations

from collections.abc import Callable

from scorewire.regex.codepoints import (
    I_FAMILY,
    Ranges,
    ascii_case_partners,
    category_ranges,
    complement,
    fold_exactly,
    intersects,
    normalize,
    unicode_ranges,
)
from scorewire.regex.escapes import read_char_escape, read_property
from scorewire.regex.flags import IGNORECASE
from scorewire.regex.re2_text import case_pair, category_text, pair_text, range_text
from scorewire.regex.reader import PatternReader


class _ClassItems:
    """The members of one character class while it is parsed."""

    __slots__ = ("cat_ranges", "categories", "props", "ranges")

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []
        self.categories: list[str] = []  # RE2 class bodies of \d \w \s and negations
        self.cat_ranges: list[Ranges] = []  # the same, as code-point ranges
        self.props: list[str] = []  # \p{..} passed through to RE2


def read_class(r: PatternReader) -> None:
    """A character class at the reader's position (a `[`)."""
    p, start = r.p, r.i
    r.i += 1
    negate = p.startswith("^", r.i)
    if negate:
        r.i += 1
    items = _ClassItems()
    first = True
    while True:
        if r.i >= len(p):
            raise r.fail("unterminated character set", start)
        c = p[r.i]
        if c == "]" and not first:
            r.i += 1
            break
        first = False
        lo = _class_member(r, items)
        if lo is None:
            continue
        if p.startswith("-", r.i) and r.i + 1 < len(p) and p[r.i + 1] != "]":
            dash = r.i
            r.i += 1
            hi = _class_member(r, items)
            if hi is None:
                raise r.fail("bad character range", dash)
            if hi < lo:
                raise r.fail("bad character range", dash)
            items.ranges.append((lo, hi))
        else:
            items.ranges.append((lo, lo))
    tok = r.emit("leaf", _class_text(r, items, negate))
    tok.exact = _exact_class(r, items, negate, r.p[start : r.i])


def _exact_class(
    r: PatternReader, items: _ClassItems, negate: bool, text: str
) -> Callable[[], Ranges | None]:
    """The exact set of a class as Python decides (None with a `\\p{..}` member)."""
    bits = r.flags.python_bits()
    ranges = normalize([*items.ranges, *(rng for c in items.cat_ranges for rng in c)])

    def exact() -> Ranges | None:
        if items.props:
            return None
        base = complement(ranges) if negate else ranges
        return fold_exactly(base, text, bits) if bits & IGNORECASE else base

    return exact


def _class_member(r: PatternReader, items: _ClassItems) -> int | None:
    """One member: returns a code point, or None after adding a category or property."""
    p = r.p
    c = p[r.i]
    if c != "\\":
        r.i += 1
        return ord(c)
    if r.i + 1 >= len(p):
        raise r.fail("bad escape (end of pattern)")
    e = p[r.i + 1]
    if e in "dDwWsS":
        items.categories.append(category_text(e, r.flags.ascii))
        items.cat_ranges.append(category_ranges(e, r.flags.ascii))
        r.i += 2
        return None
    if e in "pP":
        items.props.append(read_property(r, r.i))
        return None
    if e in "AZzB":
        raise r.fail(f"bad escape \\{e}")
    return read_char_escape(r, in_class=True)


def _class_text(r: PatternReader, items: _ClassItems, negate: bool) -> str:
    re2_icase = r.flags.re2_icase()
    ranges = list(items.ranges)
    if r.flags.icase and r.flags.ascii:
        ranges.extend(ascii_case_partners(ranges))
    elif re2_icase and any(lo <= cp <= hi for lo, hi in ranges for cp in I_FAMILY):
        ranges.extend((cp, cp) for cp in I_FAMILY)
    body = "".join(range_text(lo, hi) for lo, hi in ranges) + "".join(items.props)
    caret = "^" if negate else ""
    if not items.categories:
        pair = case_pair(ranges) if not (negate or items.props) else None
        if pair is not None and not re2_icase:
            return pair_text(pair)
        return f"[{caret}{body}]"
    cats = "".join(items.categories)
    if not re2_icase:
        return f"[{caret}{body}{cats}]"
    # Under Unicode IGNORECASE Python folds the literal members but not the \w-style
    # categories; RE2 would fold both, so the two halves are written apart.
    if not negate:
        return f"(?:(?-i:[{cats}])|[{body}])" if body else f"(?-i:[{cats}])"
    if not body or not intersects(ranges, unicode_ranges("cased")):
        # Python folds a class only when a member has another case.
        return f"(?-i:[^{body}{cats}])"
    raise r.fail(
        "a negated character class that mixes \\d/\\w/\\s with other members cannot be "
        "honoured exactly under re.IGNORECASE; drop the IGNORECASE flag or list the "
        "members without a category escape"
    )
