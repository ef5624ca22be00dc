"""`^` and `$` as Python means them.

`^` is the start of the text (`\\A`), or of a line under MULTILINE. Outside MULTILINE
Python's `$` also matches just before a final newline: at the end of the pattern (or of
its alternatives) that is `\\n?\\z`; anywhere else RE2 cannot say it and the pattern is
rebuilt around it (see `boundaries`).
"""

from __future__ import annotations

from scorewire.regex.reader import PatternReader
from scorewire.regex.tree import Assert


def read_caret(r: PatternReader) -> None:
    """A `^` at the reader's position."""
    r.emit("zero", "^").zero = "(?m:^)" if r.flags.multiline else "\\A"
    r.i += 1


def read_dollar(r: PatternReader) -> None:
    """A `$` at the reader's position."""
    at = r.i
    r.i += 1
    if r.flags.multiline:
        r.emit("zero", "$").zero = "(?m:$)"
        return
    tok = r.emit("assert", "(?:\\n?\\z)")
    tok.node = Assert("$", ascii=False)
    if not _dollar_is_final(r.p, at + 1):
        r.rewrite = True


def _dollar_is_final(p: str, j: int) -> bool:
    """Whether nothing but `$`, group ends and other alternatives follows position `j`."""
    while j < len(p):
        c = p[j]
        if c == "$":
            j += 1
        elif c == ")":
            j += 1
            if j < len(p) and p[j] in "*+?{":
                return False
        elif c == "|":
            j = _skip_alternatives(p, j)
        else:
            return False
    return True


def _skip_alternatives(p: str, j: int) -> int:
    """From a `|`, the index of the `)` closing the current group (or the end)."""
    depth, in_class = 0, False
    while j < len(p):
        c = p[j]
        if c == "\\":
            j += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
        elif c == "[":
            in_class = True
            if p.startswith("^", j + 1):
                j += 1
            if p.startswith("]", j + 1):
                j += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            if depth == 0:
                return j
            depth -= 1
        j += 1
    return j
