"""Groups and inline flags: `(...)`, `(?:...)`, `(?P<name>...)`, `(?#...)`, `(?aimsux)` at
the start and scoped `(?i-s:...)`.

A group opens with the flags in force saved and restores them when it closes. Groups
RE2 cannot run in linear time, or that mean nothing without submatches, are refused by
name: lookarounds, backreferences `(?P=name)`, atomic and conditional groups.
"""

from __future__ import annotations

from scorewire.regex.flags import (
    ASCII,
    DOTALL,
    IGNORECASE,
    MULTILINE,
    UNICODE,
    VERBOSE,
    FlagsInForce,
)
from scorewire.regex.reader import PatternReader

_INLINE_FLAGS = {
    "i": IGNORECASE,
    "m": MULTILINE,
    "s": DOTALL,
    "a": ASCII,
    "u": UNICODE,
    "x": VERBOSE,
}
_INLINE_REFUSED = {"L": "the inline flag (?L) (re.LOCALE) cannot be honoured"}
_TURNED_OFF = {"i": "icase", "m": "multiline", "s": "dotall", "x": "verbose"}


def read_leading_flags(r: PatternReader) -> None:
    """Global inline flags `(?aimsux)` at the very start, where Python 3.11 accepts them."""
    while r.p.startswith("(?", r.i):
        j = r.i + 2
        while j < len(r.p) and r.p[j].isalpha():
            j += 1
        if j >= len(r.p) or r.p[j] != ")" or j == r.i + 2:
            return
        _apply_letters(r, r.p[r.i + 2 : j], r.flags, r.i, scoped=False)
        r.i = j + 1


def _apply_letters(
    r: PatternReader, letters: str, target: FlagsInForce, at: int, *, scoped: bool
) -> None:
    for ch in letters:
        if ch in _INLINE_REFUSED:
            raise r.fail(_INLINE_REFUSED[ch], at)
        if ch not in _INLINE_FLAGS:
            raise r.fail(f"unknown inline flag {ch!r}", at)
        if ch == "i":
            target.icase = True
        elif ch == "m":
            target.multiline = True
        elif ch == "s":
            target.dotall = True
        elif ch == "a":
            target.ascii = True
        elif ch == "x":
            target.verbose = True
        elif ch == "u":
            if target.ascii and not scoped:
                raise r.fail("re.ASCII and re.UNICODE are incompatible", at)
            target.ascii = False


def read_open(r: PatternReader) -> None:
    """A group's opening at the reader's position (a `(`)."""
    p, at = r.p, r.i
    if not p.startswith("(?", at):
        _push(r, "(", 1)
        return
    rest = p[at + 2 : at + 4]
    if rest.startswith(":"):
        _push(r, "(?:", 3)
    elif rest.startswith("P<"):
        end = p.find(">", at + 4)
        if end < 0:
            raise r.fail("missing >, unterminated name")
        name = p[at + 4 : end]
        if not name.isidentifier():
            raise r.fail(f"bad character in group name {name!r}")
        _push(r, "(?:", end + 1 - at)
    elif rest.startswith("P="):
        raise r.fail("backreferences ((?P=name)) are not supported")
    elif rest.startswith(("=", "!")):
        raise r.fail("lookahead assertions ((?=...), (?!...)) are not supported")
    elif rest in ("<=", "<!"):
        raise r.fail("lookbehind assertions ((?<=...), (?<!...)) are not supported")
    elif rest.startswith(">"):
        raise r.fail("atomic groups ((?>...)) are not supported")
    elif rest.startswith("("):
        raise r.fail("conditional groups ((?(id)yes|no)) are not supported")
    elif rest.startswith("#"):
        end = p.find(")", at)
        if end < 0:
            raise r.fail("missing ), unterminated comment")
        r.i = end + 1
    else:
        _scoped_flags(r, at)


def read_close(r: PatternReader) -> None:
    """A group's `)`: the flags of the group's parent are in force again."""
    if not r.stack:
        raise r.fail("unbalanced parenthesis")
    r.flags = r.stack.pop()
    r.emit("close", ")")
    r.i += 1


def _push(r: PatternReader, text: str, consumed: int) -> None:
    r.stack.append(r.flags.copy())
    r.emit("open", text)
    r.i += consumed


def _scoped_flags(r: PatternReader, at: int) -> None:
    p = r.p
    j = at + 2
    while j < len(p) and (p[j].isalpha() or p[j] == "-"):
        j += 1
    spec = p[at + 2 : j]
    if j >= len(p) or p[j] not in ":)" or not spec:
        raise r.fail(f"unknown extension ?{p[at + 2 : at + 3]}", at)
    if p[j] == ")":
        raise r.fail("global flags not at the start of the expression", at)
    on, _, off = spec.partition("-")
    new = r.flags.copy()
    _apply_letters(r, on, new, at, scoped=True)
    for ch in off:
        if ch not in "imsx":
            raise r.fail(f"bad inline flag: cannot turn off flag {ch!r}", at)
        setattr(new, _TURNED_OFF[ch], False)
    r.stack.append(r.flags)
    r.flags = new
    r.emit("open", f"(?{new.re2_letters()}:")
    r.i = j + 1
