"""Escapes and literal characters, as Python reads them and RE2 must be told them.

`\\d \\w \\s` (and negations) become explicit code-point classes, `\\b \\B` assertions for
`boundaries`, `\\A \\Z` RE2's `\\A \\z`; `\\x \\u \\U \\N{..}` and octal escapes are decoded
to the character; backreferences are refused. A literal is written so that RE2 folds
case exactly as Python would (see `write_literal`).
"""

from __future__ import annotations

import string
import unicodedata

from scorewire.regex.codepoints import I_FAMILY, MAX_CP, category_ranges, is_ascii_letter
from scorewire.regex.re2_text import category_text, cp_text, pair_text
from scorewire.regex.reader import PatternReader
from scorewire.regex.tree import Assert

_SIMPLE = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}


def read_escape(r: PatternReader) -> None:
    """An escape outside a class, at the reader's position (a backslash)."""
    p, at = r.p, r.i
    if at + 1 >= len(p):
        raise r.fail("bad escape (end of pattern)")
    c = p[at + 1]
    if c in "dDwWsS":
        body = category_text(c, r.flags.ascii)
        # Python never case-folds these classes; RE2 would under (?i).
        tok = r.emit("leaf", f"(?-i:[{body}])" if r.flags.re2_icase() else f"[{body}]")
        ranges = category_ranges(c, r.flags.ascii)
        tok.exact = lambda: ranges
        r.i += 2
    elif c in "bB":
        # RE2's own \b is ASCII-only and works on bytes (its \B matches inside a
        # multi-byte character): the pattern is always rebuilt (see `boundaries`).
        tok = r.emit("assert", "\\" + c)
        tok.node = Assert(c, ascii=r.flags.ascii)
        r.rewrite = True
        r.i += 2
    elif c == "A":
        r.emit("zero", "\\A")
        r.i += 2
    elif c in "Zz":
        r.emit("zero", "\\z")
        r.i += 2
    elif c in "pP":
        r.emit("leaf", read_property(r, at)).exact = lambda: None
    else:
        cp = read_char_escape(r, in_class=False)
        write_literal(r, cp)


def read_property(r: PatternReader, at: int) -> str:
    """A `\\p{..}`/`\\pL` escape, passed through to RE2 (Python has none)."""
    p = r.p
    if p.startswith("{", at + 2):
        end = p.find("}", at)
        if end < 0:
            raise r.fail("missing }, unterminated property escape")
        text = p[at : end + 1]
    else:
        text = p[at : at + 3]
    r.i = at + len(text)
    return text


def read_char_escape(r: PatternReader, *, in_class: bool) -> int:
    """Decode a character escape at the reader's position (a backslash): its code point."""
    p, at = r.p, r.i
    c = p[at + 1]
    if c in _SIMPLE:
        r.i += 2
        return _SIMPLE[c]
    if c == "b" and in_class:
        r.i += 2
        return 8
    if c in "xuU":
        return _hex_escape(r, c)
    if c == "N":
        return _named_escape(r)
    if c in "01234567" and (in_class or c == "0" or _three_octal(r, at + 1)):
        return _octal_escape(r)
    if c.isdigit():
        raise r.fail("backreferences (\\1 ...) are not supported")
    if c.isascii() and c.isalpha():
        if c == "k":
            raise r.fail("backreferences (\\k<name>) are not supported")
        raise r.fail(f"bad escape \\{c}")
    r.i += 2
    return ord(c)


def _hex_escape(r: PatternReader, c: str) -> int:
    p, at = r.p, r.i
    width = {"x": 2, "u": 4, "U": 8}[c]
    digits = p[at + 2 : at + 2 + width]
    if len(digits) != width or not all(d in string.hexdigits for d in digits):
        raise r.fail(f"incomplete escape \\{c}{digits}")
    cp = int(digits, 16)
    if cp > MAX_CP:
        raise r.fail(f"bad escape \\{c}{digits}")
    r.i += 2 + width
    return cp


def _named_escape(r: PatternReader) -> int:
    p, at = r.p, r.i
    end = p.find("}", at)
    if not p.startswith("{", at + 2) or end < 0:
        raise r.fail("missing {...} after \\N")
    try:
        ch = unicodedata.lookup(p[at + 3 : end])
    except KeyError:
        raise r.fail(f"undefined character name {p[at + 3 : end]!r}") from None
    r.i = end + 1
    return ord(ch)


def _octal_escape(r: PatternReader) -> int:
    p, at = r.p, r.i
    j = at + 1
    limit = at + 4
    while j < limit and j < len(p) and p[j] in "01234567":
        j += 1
    cp = int(p[at + 1 : j], 8)
    if cp > 0o377:
        raise r.fail(f"octal escape value \\{p[at + 1 : j]} outside of range 0-0o377")
    r.i = j
    return cp


def _three_octal(r: PatternReader, j: int) -> bool:
    return len(r.p) >= j + 3 and all(ch in "01234567" for ch in r.p[j : j + 3])


def write_literal(r: PatternReader, cp: int) -> None:
    """One literal character, folded under IGNORECASE exactly as Python folds it."""
    if r.flags.icase and r.flags.ascii and is_ascii_letter(cp):
        # Python's ASCII IGNORECASE folds only A-Z/a-z; RE2's (?i) would fold more.
        lower = cp | 0x20
        r.emit("leaf", pair_text(lower)).lo = cp
    elif r.flags.re2_icase() and cp in I_FAMILY:
        r.emit("leaf", "[" + "".join(cp_text(c) for c in I_FAMILY) + "]").lo = cp
    else:
        r.emit("leaf", cp_text(cp)).lo = cp
