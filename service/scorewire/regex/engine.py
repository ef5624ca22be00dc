"""User-supplied regular expressions, written in Python's syntax, run on RE2 in linear time.

Every pattern a user hands scorewire (the `regex` check, `pattern` in a JSON Schema) runs on
google-re2, never on Python's backtracking `re`: `(a+)+$` against 50,000 `a`s and a `!`
answers in well under a millisecond instead of never (`make bench-regex`). `compile_user_regex`
takes a pattern in Python's `re` syntax and the catalog's `flags` (Python `re` flag bits;
`parse_flags` also reads Python's flag names), and returns a `UserRegex` whose
`search(text)` answers exactly what `re.search(pattern, text, flags)` would, for every
pattern both engines accept. Where RE2 cannot reproduce Python's meaning exactly, the
pattern is refused at load time with a message that names the construct; it is never
silently given another meaning, and there is no fallback to `re`.

Why RE2 with a translation rather than a binding of Rust's `regex` crate (measured on this
machine, 2026-12-01, Python 3.11.7): `flpc` 0.2.5 (last release 2024-07) and `rurex` 0.2.0
(2026-10) are linear-time and answer `(a+)+$` on 50,000 characters in 0.003 ms and
0.0004 ms, and their `\\b` is Unicode-aware, but it is Rust's word definition, not
Python's, and cannot be changed: both disagree with `re.search` on `\\bcafe\\b` against
"cafe" + U+0301 (a combining accent is a word character for Rust, not for Python), `\\bx\\b`
against "x‿", `\\b2\\b` against "2²", `\\ba\\b` against "a" + ZWJ, `\\w` on U+0301, `\\s` on
U+001C and `a$` against "a\\n", and both refuse `a$(?#c)`. Either engine needs a
translation layer to mean what Python means; RE2 already had one, measured parity with
`re` on the differential tests, and keeps one engine for every user pattern.

How Python's meaning is kept (the pattern is translated by `translate`, then compiled once):

- Matching is a substring search (`re.search`); `^`/`$` anchor as in Python.
- `\\d`, `\\w`, `\\s` (and `\\D`, `\\W`, `\\S`) are Unicode-aware in Python and ASCII-only in
  RE2, so they are written out as explicit code-point classes computed from this Python's
  own Unicode database (`str.isdecimal`, `str.isalnum`/`_`, `str.isspace`); under
  `re.ASCII` they are `[0-9]`, `[0-9A-Za-z_]` and `[ \\t\\n\\v\\f\\r]` (RE2's `\\s` lacks `\\v`).
- `\\b` and `\\B` (Unicode, or ASCII under `re.ASCII` / `(?a)`) and, outside `re.MULTILINE`,
  a `$` anywhere but at the end of the pattern (Python's `$` also matches just before a
  final newline) are conditions RE2 cannot state: RE2's `\\b` is ASCII-only and byte-wise
  (its `\\B` matches between the bytes of one character). Such a pattern is rebuilt
  without them by `boundaries` (exact; still linear-time; see there). A final `$` is
  `\\n?\\z`; `\\Z` is RE2's `\\z`. As in Python 3.11, `\\B` never matches the empty text.
- VERBOSE (64, `(?x)`, scoped `(?x:...)`): white space and `#` comments outside classes
  are dropped, as Python's parser does; escaped white space and classes keep theirs.
- `x{,n}` means `x{0,n}` (RE2 would read it as literal text); a `[` inside a class is a
  literal (RE2 would read `[[:alpha:]]` as a POSIX class); `\\b` inside a class is a
  backspace; `\\uXXXX`, `\\UXXXXXXXX`, `\\N{NAME}`, `\\xXX` and octal escapes are decoded;
  `(?#...)` comments are dropped; named groups `(?P<name>...)` are accepted; the empty
  pattern matches everything.
- `re.IGNORECASE` with Unicode: RE2 folds case like Python except for the dotted/dotless i
  family (`I i İ ı`, which Python treats as one class), which is written out explicitly;
  `\\w`-style classes are never case-folded (Python does not fold them either).
  `re.IGNORECASE` with `re.ASCII` folds only ASCII letters, as Python does, by writing
  `[aA]`-style classes itself. (A rebuilt pattern uses exact code-point sets instead,
  computed with Python's own folding.)
- `re.DOTALL` and `re.MULTILINE` map to RE2's `s` and `m` flags; inline flags `(?i)`,
  `(?s)`, `(?m)`, `(?a)`, `(?u)`, `(?x)` and scoped `(?i-s:...)` are honoured.

Refused at load time (a `ParamError` naming the construct or flag): `re.LOCALE` (4),
`re.DEBUG` (128), `re.TEMPLATE` (1) and unknown bits or names; lookaheads, lookbehinds,
backreferences, atomic groups, possessive quantifiers, conditionals; a group holding
`\\b`, `\\B` or a non-final `$` with a bounded count over 8 or a lower bound over 8
(`boundaries.MAX_UNROLL`; `*` and `+` are fine); a rebuilt pattern over
`boundaries.MAX_REWRITE_UNITS`; `\\p{..}` in a rebuilt pattern; repeat counts over 1000
(RE2's limit); anything else RE2 rejects. Patterns accepted by RE2 but not by Python
(`\\z`, `\\p{L}`) keep RE2's meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import re2
from scorewire.core.cost import LimitExceeded, current_meter
from scorewire.core.registry import ParamError
from scorewire.regex.flags import (
    ASCII,
    DEBUG,
    DOTALL,
    FLAG_NAMES,
    IGNORECASE,
    LOCALE,
    MULTILINE,
    UNICODE,
    VERBOSE,
    check_flags,
    parse_flags,
)
from scorewire.regex.quantifiers import MAX_REPEAT
from scorewire.regex.translate import translate

# The flag bits and names are part of this module's API: they are what `flags` means.
__all__ = [
    "ASCII",
    "DEBUG",
    "DOTALL",
    "FLAG_NAMES",
    "IGNORECASE",
    "LOCALE",
    "MULTILINE",
    "UNICODE",
    "VERBOSE",
    "UserRegex",
    "compile_user_regex",
    "parse_flags",
]


class UserRegex:
    """A user pattern compiled once; `search(text)` is Python's `re.search(...) is not None`."""

    __slots__ = ("_match", "_public", "flags", "pattern", "translated")

    pattern: str
    """The pattern as the user wrote it (Python syntax)."""
    flags: int
    """The Python `re` flag bits it was compiled with."""
    translated: str
    """The equivalent RE2 pattern actually run."""

    def __init__(self, pattern: str, flags: int, translated: str, compiled: Any) -> None:
        self.pattern = pattern
        self.flags = flags
        self.translated = translated
        self._public = compiled
        # The wrapper's search() decodes offsets back to str positions, which a yes/no
        # answer does not need: calling the underlying RE2::Match directly is ~4x faster.
        inner = getattr(compiled, "_regexp", None)
        self._match: Callable[..., Any] | None = getattr(inner, "Match", None)

    @property
    def program_size(self) -> int:
        """RE2 instructions of the compiled program (~18 bytes of memory each)."""
        return int(self._public.programsize)

    @property
    def re2_match(self) -> tuple[Callable[..., Any], Any] | None:
        """RE2's own `Match` and its unanchored mode, for a caller that holds the text as
        UTF-8 bytes already (the native kernel): `match(mode, data, 0, len(data))[0][0]`
        is -1 exactly when `search` is False. None when this RE2 build has no such call."""
        return None if self._match is None else (self._match, _UNANCHORED)

    def search(self, text: str) -> bool:
        """Whether the pattern matches anywhere in `text`."""
        if self._match is not None:
            data = text.encode("utf-8", "surrogatepass")
            return bool(self._match(_UNANCHORED, data, 0, len(data))[0][0] != -1)
        return self._public.search(text) is not None

    def __repr__(self) -> str:
        return f"UserRegex({self.pattern!r}, flags={self.flags})"


_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
_DEFAULT_MAX_MEM = 8 << 20
"""RE2's own per-pattern compile memory (its default)."""


REWRITE_MAX_MEM = 32 << 20
"""RE2's memory budget (bytes) for a pattern rebuilt around `\\b`, `\\B` or `$` (8 MiB,
RE2's default, for the others). A rebuilt pattern names large Unicode classes several
times; with 8 MiB its DFA cache overflows and RE2 falls back to its NFA, still linear but
slow: `^(?:\\b\\w+\\b\\W*)+$` on 50,000 characters took 196 ms, with 32 MiB 0.21 ms. The
cache grows lazily, so a pattern uses this much only on texts that need it."""


def _options(max_mem: int = _DEFAULT_MAX_MEM) -> Any:
    opts = re2.Options()
    opts.max_mem = max_mem
    opts.log_errors = False  # RE2 otherwise writes an "E0000 re2.cc" line per bad pattern
    opts.never_capture = True  # a yes/no search needs no submatches; it runs faster
    return opts


_OPTIONS = _options()
_REWRITE_OPTIONS = _options(REWRITE_MAX_MEM)


def compile_user_regex(
    pattern: str, flags: int = 0, field: str = "pattern", *, flags_field: str = "flags"
) -> UserRegex:
    """Compile a Python-syntax pattern with Python `re` flag bits onto RE2.

    Raises `ParamError(field, ...)` for a pattern that cannot be honoured exactly and
    `ParamError(flags_field, ...)` for such a flag. See the module docstring for the rules.
    """
    check_flags(flags, flags_field)
    translated, rebuilt = translate(pattern, flags, field)
    base = (_REWRITE_OPTIONS, REWRITE_MAX_MEM) if rebuilt else (_OPTIONS, _DEFAULT_MAX_MEM)
    return UserRegex(pattern, flags, translated, _compile_metered(translated, field, *base))


PROGRAM_SIZE_SETTING = "max_regex_program_size_per_request"
"""The request limit on RE2 program instructions, summed over a request's patterns."""
_MEM_PER_INSTRUCTION = 32
"""Compile memory RE2 needs per program instruction, generously (measured ~24 bytes)."""


def _compile_metered(translated: str, field: str, options: Any, max_mem: int) -> Any:
    """Compile on RE2 within what the current request's meter has left, and charge it.

    Compiling costs time in proportion to the program built (`\\d{1000}` is 84,000
    instructions and 80 ms), so RE2's memory cap is set from the instructions the
    request may still use; a pattern over it is refused naming the setting, before
    the memory and time are spent.
    """
    meter = current_meter()
    left = meter.left(PROGRAM_SIZE_SETTING) if meter is not None else None
    capped = False
    if left is not None and left * _MEM_PER_INSTRUCTION < max_mem:
        options, capped = _options(max(left * _MEM_PER_INSTRUCTION, 4096)), True
    try:
        compiled = re2.compile(translated, options=options)
    except re2.error as err:
        message = _re2_message(err)
        if capped and "too large" in message:
            raise LimitExceeded(
                PROGRAM_SIZE_SETTING,
                field,
                f"the pattern's compiled program would exceed {PROGRAM_SIZE_SETTING} "
                f"({meter.limits[PROGRAM_SIZE_SETTING] if meter else 0} RE2 instructions "
                "per request)",
            ) from None
        raise ParamError(field, message) from None
    if meter is not None:
        meter.charge(PROGRAM_SIZE_SETTING, compiled.programsize, field, "RE2 instructions")
    return compiled


def _re2_message(err: Exception) -> str:
    raw = err.args[0] if err.args else ""
    msg = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    lowered = msg.lower()
    if "invalid repetition size" in lowered:
        return f"repeat counts are limited to {MAX_REPEAT} by the linear-time engine ({msg})"
    if "bad repetition operator" in lowered:
        return f"multiple repeat: a quantifier cannot follow a quantifier ({msg})"
    if "argument for repetition operator" in lowered or "missing argument to rep" in lowered:
        return f"nothing to repeat ({msg})"
    if "pattern too large" in lowered:
        return "the pattern is too large for the regex engine's memory limit"
    return f"the regex engine rejects the pattern: {msg}"
