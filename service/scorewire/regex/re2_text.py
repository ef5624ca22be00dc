"""Code points and sets of them written as RE2 text that RE2 reads as exactly those.

Every character is written so that RE2 cannot give it another meaning: ASCII word
characters as themselves, punctuation escaped, everything else as `\\x{..}`; a class that
is exactly one ASCII letter in both cases is written as an alternation (see `pair_text`).
"""

from __future__ import annotations

import functools
import string

from scorewire.regex.codepoints import Ranges, category_ranges

NOTHING = "[^\\x00-\\x{10FFFF}]"
"""RE2 text that matches no character."""


def cp_text(cp: int) -> str:
    """One code point as RE2 text that matches just that character."""
    ch = chr(cp)
    if ch.isascii() and (ch.isalnum() or ch == "_"):
        return ch
    if ch in string.punctuation:
        return "\\" + ch
    return f"\\x{{{cp:X}}}"


def range_text(lo: int, hi: int) -> str:
    """A class member for the code points `lo` to `hi`."""
    return cp_text(lo) if lo == hi else f"{cp_text(lo)}-{cp_text(hi)}"


@functools.cache
def category_text(letter: str, ascii_only: bool) -> str:
    """The body of a class for `\\d \\D \\w \\W \\s \\S` (without brackets), as RE2 text."""
    return "".join(range_text(lo, hi) for lo, hi in category_ranges(letter, ascii_only))


def case_pair(ranges: list[tuple[int, int]]) -> int | None:
    """The lower-case letter when `ranges` is exactly one ASCII letter in both cases."""
    members = {cp for lo, hi in ranges for cp in range(lo, min(hi, lo + 2) + 1)}
    if len(members) == 2 and max(hi - lo for lo, hi in ranges) <= 1:
        low = min(members)
        if 0x41 <= low <= 0x5A and members == {low, low + 32}:
            return low + 32
    return None


def pair_text(lower: int) -> str:
    """The ASCII letter `lower` in both cases, written so RE2 folds nothing else in."""
    # RE2's parser turns a class that is exactly {X, x} into a case-folded literal, and
    # when such literals are merged in an alternation it folds them with Unicode rules:
    # `[sS]|[bB]` then matches 'ſ' and `[kK]|b` the Kelvin sign. Written as an
    # alternation of two plain literals the pair keeps its meaning.
    return f"(?:{chr(lower)}|{chr(lower - 32)})"


@functools.lru_cache(maxsize=512)
def set_text(ranges: Ranges) -> str:
    """A code-point set as RE2 text that RE2 reads as exactly that set (no case folding)."""
    if len(ranges) == 1 and ranges[0][0] == ranges[0][1]:
        return cp_text(ranges[0][0])
    pair = case_pair(list(ranges))
    if pair is not None:
        return pair_text(pair)
    return "[" + "".join(range_text(lo, hi) for lo, hi in ranges) + "]"
