"""Sets of code points, and the sets Python's `re` means by its classes and case folding.

A set is a tuple of sorted, disjoint `(lo, hi)` ranges (`Ranges`). Python's own Unicode
database and `re` decide every set here (`\\d` is `str.isdecimal`, case folding is what
`re` folds), so a translated pattern means what Python means on this Python.
"""

from __future__ import annotations

import bisect
import functools
import importlib
import re
from collections.abc import Callable, Iterable

Ranges = tuple[tuple[int, int], ...]

MAX_CP = 0x10FFFF
ALL: Ranges = ((0, MAX_CP),)
NOT_NEWLINE: Ranges = ((0, 9), (11, MAX_CP))
ASCII_DIGIT: Ranges = ((0x30, 0x39),)
ASCII_WORD: Ranges = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
ASCII_SPACE: Ranges = ((0x09, 0x0D), (0x20, 0x20))
I_FAMILY = (0x49, 0x69, 0x130, 0x131)
"""Characters Python's IGNORECASE treats as one class but RE2's case folding does not."""


# --- set algebra -------------------------------------------------------------------------


def union(*sets: Ranges) -> Ranges:
    """Every code point in any of `sets`."""
    merged: list[list[int]] = []
    for lo, hi in sorted(r for s in sets for r in s):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def complement(ranges: Ranges) -> Ranges:
    """All code points not in `ranges` (which must be sorted and disjoint)."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= MAX_CP:
        out.append((nxt, MAX_CP))
    return tuple(out)


def intersect(a: Ranges, b: Ranges) -> Ranges:
    """The code points in both `a` and `b`."""
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, disjoint, merged ranges."""
    return union(tuple(ranges))


def intersects(ranges: Iterable[tuple[int, int]], sorted_ranges: Ranges) -> bool:
    """Whether any of `ranges` (in any order) meets the sorted set `sorted_ranges`."""
    for lo, hi in ranges:
        # The last range starting at or before hi is the only one that can reach lo.
        k = bisect.bisect_right(sorted_ranges, (hi, MAX_CP))
        if k and sorted_ranges[k - 1][1] >= lo:
            return True
    return False


# --- Python's classes --------------------------------------------------------------------


def _ranges_where(pred: Callable[[str], bool]) -> Ranges:
    out: list[tuple[int, int]] = []
    start = -1
    for cp in range(MAX_CP + 1):
        if pred(chr(cp)):
            if start < 0:
                start = cp
        elif start >= 0:
            out.append((start, cp - 1))
            start = -1
    if start >= 0:
        out.append((start, MAX_CP))
    return tuple(out)


_UNICODE_PREDICATES: dict[str, Callable[[str], bool]] = {
    # Python's sre: \d is str.isdecimal, \w is str.isalnum or "_", \s is str.isspace.
    "d": str.isdecimal,
    "w": lambda ch: ch.isalnum() or ch == "_",
    "s": str.isspace,
    # Characters with another case; a class of none of them is never case-folded.
    "cased": lambda ch: ch.lower() != ch or ch.upper() != ch,
}


@functools.cache
def unicode_ranges(name: str) -> Ranges:
    """Code-point ranges of a Unicode class, computed once from this Python's database."""
    return _ranges_where(_UNICODE_PREDICATES[name])


@functools.cache
def category_ranges(letter: str, ascii_only: bool) -> Ranges:
    """The code points of `\\d \\D \\w \\W \\s \\S` as Python means them."""
    base = letter.lower()
    if ascii_only:
        ranges = {"d": ASCII_DIGIT, "w": ASCII_WORD, "s": ASCII_SPACE}[base]
    else:
        ranges = unicode_ranges(base)
    return complement(ranges) if letter.isupper() else ranges


# --- case folding ------------------------------------------------------------------------


def is_ascii_letter(cp: int) -> bool:
    """Whether `cp` is A-Z or a-z."""
    return 0x41 <= cp <= 0x5A or 0x61 <= cp <= 0x7A


def ascii_case_partners(ranges: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """The other case of the ASCII letters in `ranges` (what `re.ASCII|re.I` adds)."""
    out = []
    for lo, hi in ranges:
        for base, other in ((0x41, 0x61), (0x61, 0x41)):
            a, b = max(lo, base), min(hi, base + 25)
            if a <= b:
                out.append((a - base + other, b - base + other))
    return out


@functools.cache
def cased_code_points() -> Ranges:
    """Code points whose membership in a class can change under Python's IGNORECASE.

    Python folds a character through its simple lower/upper case and a small table of
    extra equivalences (`re._casefix`); a character with neither is matched only by
    itself. Computed once (about 0.1 s) from this Python's own tables.
    """
    # Private modules of this Python's `re`, read (not patched) so the sets are its own.
    sre = importlib.import_module("_sre")
    casefix = importlib.import_module("re._casefix")
    points = {cp for cp in range(MAX_CP + 1) if sre.unicode_iscased(cp)}
    for key, others in casefix._EXTRA_CASES.items():
        points.add(key)
        points.update(others)
    return normalize((cp, cp) for cp in points)


@functools.lru_cache(maxsize=1024)
def fold_exactly(base: Ranges, python_text: str, python_flags: int) -> Ranges:
    """The exact set one case-insensitive character matcher accepts, as Python decides.

    `base` is what the matcher accepts without case folding. Only the cased code points
    can differ; for each of them Python's own `re` answers on the one-character matcher
    (a literal or a class, which cannot backtrack), so the set is Python's by construction.
    About 1-3 ms a matcher; memoised, as the same letters recur in a pattern.
    """
    rx = re.compile(python_text, python_flags)
    cased = cased_code_points()
    hits = tuple((cp, cp) for lo, hi in cased for cp in range(lo, hi + 1) if rx.fullmatch(chr(cp)))
    return union(intersect(base, complement(cased)), hits)
