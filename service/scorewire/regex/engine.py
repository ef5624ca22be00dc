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

How Python's meaning is kept (the pattern is translated, then compiled once):

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

import string
import unicodedata
from collections.abc import Callable
from typing import Any

import re2
from scorewire.core.cost import LimitExceeded, current_meter
from scorewire.core.registry import ParamError
from scorewire.regex import boundaries
from scorewire.regex.codepoints import (
    ALL,
    I_FAMILY,
    MAX_CP,
    NOT_NEWLINE,
    Ranges,
    ascii_case_partners,
    category_ranges,
    complement,
    fold_exactly,
    intersects,
    is_ascii_letter,
    normalize,
    unicode_ranges,
)
from scorewire.regex.re2_text import case_pair, category_text, cp_text, pair_text, range_text
from scorewire.regex.tree import Alt, Assert, Leaf, Node, Rep, Seq, Zero

__all__ = [
    "ASCII",
    "DOTALL",
    "FLAG_NAMES",
    "IGNORECASE",
    "MULTILINE",
    "UNICODE",
    "UserRegex",
    "compile_user_regex",
    "parse_flags",
]

# Python `re` flag bits (the values of re.RegexFlag; tests assert they match).
TEMPLATE = 1
IGNORECASE = 2
LOCALE = 4
MULTILINE = 8
DOTALL = 16
UNICODE = 32
VERBOSE = 64
DEBUG = 128
ASCII = 256

_REFUSED_FLAGS = {
    TEMPLATE: "re.TEMPLATE (1) is not supported",
    LOCALE: "re.LOCALE (4) cannot be honoured: it applies only to bytes patterns and the "
    "C locale, which the linear-time engine does not read",
    DEBUG: "re.DEBUG (128) is not supported",
}
_KNOWN_FLAGS = TEMPLATE | IGNORECASE | LOCALE | MULTILINE | DOTALL | UNICODE | VERBOSE
_KNOWN_FLAGS |= DEBUG | ASCII

_INLINE_FLAGS = {
    "i": IGNORECASE,
    "m": MULTILINE,
    "s": DOTALL,
    "a": ASCII,
    "u": UNICODE,
    "x": VERBOSE,
}
_INLINE_REFUSED = {"L": "the inline flag (?L) (re.LOCALE) cannot be honoured"}
# Python's VERBOSE skips these outside classes (sre_parse.WHITESPACE).
_VERBOSE_SPACE = frozenset(" \t\n\r\v\f")

FLAG_NAMES = {
    "IGNORECASE": IGNORECASE,
    "I": IGNORECASE,
    "MULTILINE": MULTILINE,
    "M": MULTILINE,
    "DOTALL": DOTALL,
    "S": DOTALL,
    "VERBOSE": VERBOSE,
    "X": VERBOSE,
    "ASCII": ASCII,
    "A": ASCII,
    "UNICODE": UNICODE,
    "U": UNICODE,
    "LOCALE": LOCALE,
    "L": LOCALE,
    "DEBUG": DEBUG,
    "TEMPLATE": TEMPLATE,
    "T": TEMPLATE,
}
"""Python's `re` flag names (long and one-letter, as in `re.IGNORECASE` / `re.I`)."""

MAX_REPEAT = 1000
"""RE2's largest repeat count in `{m,n}`; Python allows far more, RE2 refuses the pattern."""


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
    _check_flags(flags, flags_field)
    translator = _Translator(pattern, flags, field)
    translated = translator.translate()
    base = (
        (_REWRITE_OPTIONS, REWRITE_MAX_MEM) if translator.rewrite else (_OPTIONS, _DEFAULT_MAX_MEM)
    )
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


def parse_flags(value: object, field: str = "flags") -> int:
    """Flags as the catalog accepts them: an int of Python `re` bits or Python's names.

    Names may be a list (`["IGNORECASE", "MULTILINE"]`) or one string (`"IGNORECASE"`,
    `"I|M"`); they are Python's (`FLAG_NAMES`), in any case, with or without `re.`. An
    unknown name is a `ParamError(field, ...)`; so are unknown or unsupported bits (at
    compile). The bits of the names are OR-ed, as `re.I | re.M` would be.
    """
    if isinstance(value, bool):
        raise ParamError(field, "flags must be an integer of Python re flag bits or flag names")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)  # a protobuf number arrives as a double
    if isinstance(value, str):
        names: list[object] = [part for part in value.split("|")]
    elif isinstance(value, list | tuple):
        names = list(value)
    else:
        raise ParamError(field, "flags must be an integer of Python re flag bits or flag names")
    bits = 0
    for k, name in enumerate(names):
        where = field if isinstance(value, str) else f"{field}[{k}]"
        if isinstance(name, int) and not isinstance(name, bool):
            bits |= name
            continue
        if not isinstance(name, str):
            raise ParamError(where, "a flag must be a name such as IGNORECASE")
        key = name.strip().upper().removeprefix("RE.")
        if key not in FLAG_NAMES:
            known = ", ".join(n for n in FLAG_NAMES if len(n) > 1)
            raise ParamError(where, f"unknown flag name {name.strip()!r}; known: {known}")
        bits |= FLAG_NAMES[key]
    return bits


def _check_flags(flags: int, field: str) -> None:
    if isinstance(flags, bool) or not isinstance(flags, int) or flags < 0:
        raise ParamError(field, "flags must be a non-negative integer of Python re flag bits")
    unknown = flags & ~_KNOWN_FLAGS
    if unknown:
        raise ParamError(field, f"unknown flag bits {unknown} in flags {flags}")
    for bit, message in _REFUSED_FLAGS.items():
        if flags & bit:
            raise ParamError(field, message)
    if flags & ASCII and flags & UNICODE:
        raise ParamError(field, "re.ASCII (256) and re.UNICODE (32) are incompatible")


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


# --- the translator ------------------------------------------------------------------


class _Flags:
    """The flags in force at one point of the pattern."""

    __slots__ = ("ascii", "dotall", "icase", "multiline", "verbose")

    def __init__(self, bits: int) -> None:
        self.icase = bool(bits & IGNORECASE)
        self.multiline = bool(bits & MULTILINE)
        self.dotall = bool(bits & DOTALL)
        self.ascii = bool(bits & ASCII)
        self.verbose = bool(bits & VERBOSE)

    def copy(self) -> _Flags:
        new = _Flags(0)
        new.icase, new.multiline = self.icase, self.multiline
        new.dotall, new.ascii, new.verbose = self.dotall, self.ascii, self.verbose
        return new

    def python_bits(self) -> int:
        """The flags that decide what one character matcher accepts, as Python bits."""
        return (IGNORECASE if self.icase else 0) | (ASCII if self.ascii else 0)

    def re2_letters(self) -> str:
        """RE2's own flags: case folding is done by hand under ASCII (see `_literal`)."""
        on = ("i" if self.icase and not self.ascii else "") + ("m" if self.multiline else "")
        on += "s" if self.dotall else ""
        off = "".join(f for f in "ims" if f not in on)
        return on + ("-" + off if off else "")


class _ClassItems:
    """The members of one character class while it is parsed."""

    __slots__ = ("cat_ranges", "categories", "props", "ranges")

    def __init__(self) -> None:
        self.ranges: list[tuple[int, int]] = []
        self.categories: list[str] = []  # RE2 class bodies of \d \w \s and negations
        self.cat_ranges: list[Ranges] = []  # the same, as code-point ranges
        self.props: list[str] = []  # \p{..} passed through to RE2


class _Tok:
    """One piece of the translated pattern: its RE2 text and what it is.

    `kind` is "open", "close", "bar", "quant" (`lo`, `hi`), "zero" (an anchor; `zero` is
    its flags-independent text), "leaf" (one character; `exact` gives its exact code-point
    set as Python decides, or None for a `\\p{..}` only RE2 knows) or "assert" (`\\b`, `\\B`,
    `$`; `node`). Only patterns with an assertion are rebuilt from the kinds.
    """

    __slots__ = ("exact", "hi", "kind", "lo", "node", "text", "zero")

    def __init__(self, kind: str, text: str) -> None:
        self.kind = kind
        self.text = text
        self.lo = 0
        self.hi: int | None = None
        self.zero = text
        self.exact: Callable[[], Ranges | None] | None = None
        self.node: Assert | None = None


class _Translator:
    """Walks a Python-syntax pattern once and writes the equivalent RE2 pattern."""

    def __init__(self, pattern: str, flags: int, field: str) -> None:
        if not isinstance(pattern, str):
            raise ParamError(field, "the pattern must be a string")
        self.p = pattern
        self.i = 0
        self.field = field
        self.flags = _Flags(flags)
        self.stack: list[_Flags] = []
        self.out: list[_Tok] = []
        self.rewrite = False  # an assertion RE2 cannot say directly: rebuild (see boundaries)

    def fail(self, message: str, at: int | None = None) -> ParamError:
        pos = self.i if at is None else at
        return ParamError(self.field, f"{message} (at position {pos})")

    # The whole pattern.

    def translate(self) -> str:
        self._leading_global_flags()
        start_flags = self.flags.re2_letters()
        n = len(self.p)
        while self.i < n:
            if self.flags.verbose and self._skip_verbose():
                continue
            start = self.i
            mark = len(self.out)
            self._atom()
            for tok in self.out[mark:]:
                if tok.kind == "leaf" and tok.exact is None:
                    tok.exact = self._exact_literal(start, tok.lo)
        if self.stack:
            raise self.fail("missing ), unterminated group")
        if self.rewrite:
            return self._rewritten()
        return f"(?{start_flags})" + "".join(t.text for t in self.out)

    def _skip_verbose(self) -> bool:
        """Under VERBOSE, skip white space or a `#` comment at self.i; True if skipped."""
        c = self.p[self.i]
        if c in _VERBOSE_SPACE:
            self.i += 1
            return True
        if c == "#":
            end = self.p.find("\n", self.i)
            self.i = len(self.p) if end < 0 else end + 1
            return True
        return False

    def _exact_literal(self, start: int, cp: int) -> Callable[[], Ranges | None]:
        """The exact set of the literal `cp` written at p[start:self.i] (case folded)."""
        text, bits = self.p[start : self.i], self.flags.python_bits()

        def exact() -> Ranges:
            one = ((cp, cp),)
            return fold_exactly(one, text, bits) if bits & IGNORECASE else one

        return exact

    def _emit(self, kind: str, text: str) -> _Tok:
        tok = _Tok(kind, text)
        self.out.append(tok)
        return tok

    def _rewritten(self) -> str:
        """The pattern rebuilt without `\\b`, `\\B` and `$` (see `boundaries`)."""
        tree = _TreeBuilder(self.out, self.field).build()
        try:
            return boundaries.rewrite(tree)
        except boundaries.Unsupported as err:
            raise ParamError(self.field, f"{err} (the pattern holds \\b, \\B or $)") from None

    def _leading_global_flags(self) -> None:
        # Python 3.11 accepts global inline flags (?aimsux) only at the very start.
        while self.p.startswith("(?", self.i):
            j = self.i + 2
            while j < len(self.p) and self.p[j].isalpha():
                j += 1
            if j >= len(self.p) or self.p[j] != ")" or j == self.i + 2:
                return
            self._apply_letters(self.p[self.i + 2 : j], self.flags, self.i, scoped=False)
            self.i = j + 1

    def _apply_letters(self, letters: str, target: _Flags, at: int, *, scoped: bool) -> None:
        for ch in letters:
            if ch in _INLINE_REFUSED:
                raise self.fail(_INLINE_REFUSED[ch], at)
            if ch not in _INLINE_FLAGS:
                raise self.fail(f"unknown inline flag {ch!r}", at)
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
                    raise self.fail("re.ASCII and re.UNICODE are incompatible", at)
                target.ascii = False

    def _atom(self) -> None:
        c = self.p[self.i]
        if c == "\\":
            self._escape()
        elif c == "[":
            self._class()
        elif c == "(":
            self._open_group()
        elif c == ")":
            if not self.stack:
                raise self.fail("unbalanced parenthesis")
            self.flags = self.stack.pop()
            self._emit("close", ")")
            self.i += 1
        elif c == "$":
            self._dollar()
        elif c == "{":
            if not self._counted_repeat():
                self._literal(ord("{"))
                self.i += 1
        elif c in "*+?":
            self._no_repeat_of_repeat()
            tok = self._emit("quant", c)
            tok.lo, tok.hi = {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
            self.i += 1
            self._after_quantifier()
        elif c == "^":
            self._emit("zero", "^").zero = "(?m:^)" if self.flags.multiline else "\\A"
            self.i += 1
        elif c == "|":
            self._emit("bar", "|")
            self.i += 1
        elif c == ".":
            dotall = self.flags.dotall
            self._emit("leaf", ".").exact = lambda: ALL if dotall else NOT_NEWLINE
            self.i += 1
        else:
            self._literal(ord(c))
            self.i += 1

    def _after_quantifier(self) -> None:
        if self.i < len(self.p) and self.p[self.i] == "?":
            self.out[-1].text += "?"  # lazy: the same yes/no answer, kept for RE2
            self.i += 1
        if self.i < len(self.p) and self.p[self.i] == "+":
            raise self.fail("possessive quantifiers (*+, ++, ?+, {m,n}+) are not supported")

    def _no_repeat_of_repeat(self) -> None:
        # Python refuses `a* ?` under VERBOSE and `a*(?#c)*` ("multiple repeat"); RE2 would
        # read the first as a lazy `a*?`.
        if self.out and self.out[-1].kind == "quant":
            raise self.fail("multiple repeat")

    def _counted_repeat(self) -> bool:
        """`{m}`, `{m,}`, `{,n}`, `{m,n}` as Python reads them; False when `{` is literal."""
        p, j = self.p, self.i + 1
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
                raise self.fail(
                    f"repeat count {count} is over the linear-time engine's limit of {MAX_REPEAT}"
                )
        if high is not None and high < low:
            raise self.fail("min repeat greater than max repeat")
        text = f"{{{low},{'' if high is None else high}}}" if comma else f"{{{low}}}"
        self._no_repeat_of_repeat()
        tok = self._emit("quant", text)
        tok.lo, tok.hi = low, high
        self.i = j + 1
        self._after_quantifier()
        return True

    # Anchors.

    def _dollar(self) -> None:
        at = self.i
        self.i += 1
        if self.flags.multiline:
            self._emit("zero", "$").zero = "(?m:$)"
            return
        # Outside MULTILINE Python's `$` also matches just before a final newline. At the
        # end of the pattern (or of its alternatives) that is `\n?\z`; anywhere else the
        # pattern is rebuilt around it (see `boundaries`).
        tok = self._emit("assert", "(?:\\n?\\z)")
        tok.node = Assert("$", ascii=False)
        if not self._dollar_is_final(at + 1):
            self.rewrite = True

    def _dollar_is_final(self, j: int) -> bool:
        p = self.p
        while j < len(p):
            c = p[j]
            if c == "$":
                j += 1
            elif c == ")":
                j += 1
                if j < len(p) and p[j] in "*+?{":
                    return False
            elif c == "|":
                j = self._skip_alternatives(j)
            else:
                return False
        return True

    def _skip_alternatives(self, j: int) -> int:
        """From a `|`, the index of the `)` closing the current group (or the end)."""
        p, depth, in_class = self.p, 0, False
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

    # Groups.

    def _open_group(self) -> None:
        p, at = self.p, self.i
        if not p.startswith("(?", at):
            self.stack.append(self.flags.copy())
            self._emit("open", "(")
            self.i += 1
            return
        rest = p[at + 2 : at + 4]
        if rest.startswith(":"):
            self._push("(?:", 3)
        elif rest.startswith("P<"):
            end = p.find(">", at + 4)
            if end < 0:
                raise self.fail("missing >, unterminated name")
            name = p[at + 4 : end]
            if not name.isidentifier():
                raise self.fail(f"bad character in group name {name!r}")
            self._push("(?:", end + 1 - at)
        elif rest.startswith("P="):
            raise self.fail("backreferences ((?P=name)) are not supported")
        elif rest.startswith(("=", "!")):
            raise self.fail("lookahead assertions ((?=...), (?!...)) are not supported")
        elif rest in ("<=", "<!"):
            raise self.fail("lookbehind assertions ((?<=...), (?<!...)) are not supported")
        elif rest.startswith(">"):
            raise self.fail("atomic groups ((?>...)) are not supported")
        elif rest.startswith("("):
            raise self.fail("conditional groups ((?(id)yes|no)) are not supported")
        elif rest.startswith("#"):
            end = p.find(")", at)
            if end < 0:
                raise self.fail("missing ), unterminated comment")
            self.i = end + 1
        else:
            self._scoped_flags(at)

    def _push(self, text: str, consumed: int) -> None:
        self.stack.append(self.flags.copy())
        self._emit("open", text)
        self.i += consumed

    def _scoped_flags(self, at: int) -> None:
        p = self.p
        j = at + 2
        while j < len(p) and (p[j].isalpha() or p[j] == "-"):
            j += 1
        spec = p[at + 2 : j]
        if j >= len(p) or p[j] not in ":)" or not spec:
            raise self.fail(f"unknown extension ?{p[at + 2 : at + 3]}", at)
        if p[j] == ")":
            raise self.fail("global flags not at the start of the expression", at)
        on, _, off = spec.partition("-")
        new = self.flags.copy()
        self._apply_letters(on, new, at, scoped=True)
        for ch in off:
            if ch not in "imsx":
                raise self.fail(f"bad inline flag: cannot turn off flag {ch!r}", at)
            setattr(new, {"i": "icase", "m": "multiline", "s": "dotall", "x": "verbose"}[ch], False)
        self.stack.append(self.flags)
        self.flags = new
        self._emit("open", f"(?{new.re2_letters()}:")
        self.i = j + 1

    # Escapes outside classes.

    def _escape(self) -> None:
        p, at = self.p, self.i
        if at + 1 >= len(p):
            raise self.fail("bad escape (end of pattern)")
        c = p[at + 1]
        if c in "dDwWsS":
            body = category_text(c, self.flags.ascii)
            # Python never case-folds these classes; RE2 would under (?i).
            tok = self._emit("leaf", f"(?-i:[{body}])" if self._re2_icase() else f"[{body}]")
            ranges = category_ranges(c, self.flags.ascii)
            tok.exact = lambda: ranges
            self.i += 2
        elif c in "bB":
            # RE2's own \b is ASCII-only and works on bytes (its \B matches inside a
            # multi-byte character): the pattern is always rebuilt (see `boundaries`).
            tok = self._emit("assert", "\\" + c)
            tok.node = Assert(c, ascii=self.flags.ascii)
            self.rewrite = True
            self.i += 2
        elif c == "A":
            self._emit("zero", "\\A")
            self.i += 2
        elif c in "Zz":
            self._emit("zero", "\\z")
            self.i += 2
        elif c in "pP":
            self._emit("leaf", self._property(at)).exact = lambda: None
        else:
            cp = self._char_escape(in_class=False)
            self._literal(cp)

    def _property(self, at: int) -> str:
        """A `\\p{..}`/`\\pL` escape, passed through to RE2 (Python has none)."""
        p = self.p
        if p.startswith("{", at + 2):
            end = p.find("}", at)
            if end < 0:
                raise self.fail("missing }, unterminated property escape")
            text = p[at : end + 1]
        else:
            text = p[at : at + 3]
        self.i = at + len(text)
        return text

    def _char_escape(self, *, in_class: bool) -> int:
        """Decode a character escape at `self.i` (a backslash) and return its code point."""
        p, at = self.p, self.i
        c = p[at + 1]
        simple = {"a": 7, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
        if c in simple:
            self.i += 2
            return simple[c]
        if c == "b" and in_class:
            self.i += 2
            return 8
        if c in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[c]
            digits = p[at + 2 : at + 2 + width]
            if len(digits) != width or not all(d in string.hexdigits for d in digits):
                raise self.fail(f"incomplete escape \\{c}{digits}")
            cp = int(digits, 16)
            if cp > MAX_CP:
                raise self.fail(f"bad escape \\{c}{digits}")
            self.i += 2 + width
            return cp
        if c == "N":
            end = p.find("}", at)
            if not p.startswith("{", at + 2) or end < 0:
                raise self.fail("missing {...} after \\N")
            try:
                ch = unicodedata.lookup(p[at + 3 : end])
            except KeyError:
                raise self.fail(f"undefined character name {p[at + 3 : end]!r}") from None
            self.i = end + 1
            return ord(ch)
        if c in "01234567" and (in_class or c == "0" or self._three_octal(at + 1)):
            j = at + 1
            limit = at + 4
            while j < limit and j < len(p) and p[j] in "01234567":
                j += 1
            cp = int(p[at + 1 : j], 8)
            if cp > 0o377:
                raise self.fail(f"octal escape value \\{p[at + 1 : j]} outside of range 0-0o377")
            self.i = j
            return cp
        if c.isdigit():
            raise self.fail("backreferences (\\1 ...) are not supported")
        if c.isascii() and c.isalpha():
            if c == "k":
                raise self.fail("backreferences (\\k<name>) are not supported")
            raise self.fail(f"bad escape \\{c}")
        self.i += 2
        return ord(c)

    def _three_octal(self, j: int) -> bool:
        return len(self.p) >= j + 3 and all(ch in "01234567" for ch in self.p[j : j + 3])

    # Literals and case folding.

    def _re2_icase(self) -> bool:
        return self.flags.icase and not self.flags.ascii

    def _literal(self, cp: int) -> None:
        if self.flags.icase and self.flags.ascii and is_ascii_letter(cp):
            # Python's ASCII IGNORECASE folds only A-Z/a-z; RE2's (?i) would fold more.
            lower = cp | 0x20
            self._emit("leaf", pair_text(lower)).lo = cp
        elif self._re2_icase() and cp in I_FAMILY:
            self._emit("leaf", "[" + "".join(cp_text(c) for c in I_FAMILY) + "]").lo = cp
        else:
            self._emit("leaf", cp_text(cp)).lo = cp

    # Character classes.

    def _class(self) -> None:
        p, start = self.p, self.i
        self.i += 1
        negate = p.startswith("^", self.i)
        if negate:
            self.i += 1
        items = _ClassItems()
        first = True
        while True:
            if self.i >= len(p):
                raise self.fail("unterminated character set", start)
            c = p[self.i]
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            lo = self._class_member(items)
            if lo is None:
                continue
            if p.startswith("-", self.i) and self.i + 1 < len(p) and p[self.i + 1] != "]":
                dash = self.i
                self.i += 1
                hi = self._class_member(items)
                if hi is None:
                    raise self.fail("bad character range", dash)
                if hi < lo:
                    raise self.fail("bad character range", dash)
                items.ranges.append((lo, hi))
            else:
                items.ranges.append((lo, lo))
        tok = self._emit("leaf", self._class_text(items, negate))
        tok.exact = self._exact_class(items, negate, self.p[start : self.i])

    def _exact_class(
        self, items: _ClassItems, negate: bool, text: str
    ) -> Callable[[], Ranges | None]:
        """The exact set of a class as Python decides (None with a `\\p{..}` member)."""
        bits = self.flags.python_bits()
        ranges = normalize([*items.ranges, *(r for c in items.cat_ranges for r in c)])

        def exact() -> Ranges | None:
            if items.props:
                return None
            base = complement(ranges) if negate else ranges
            return fold_exactly(base, text, bits) if bits & IGNORECASE else base

        return exact

    def _class_member(self, items: _ClassItems) -> int | None:
        """One member: returns a code point, or None after adding a category or property."""
        p = self.p
        c = p[self.i]
        if c != "\\":
            self.i += 1
            return ord(c)
        if self.i + 1 >= len(p):
            raise self.fail("bad escape (end of pattern)")
        e = p[self.i + 1]
        if e in "dDwWsS":
            items.categories.append(category_text(e, self.flags.ascii))
            items.cat_ranges.append(category_ranges(e, self.flags.ascii))
            self.i += 2
            return None
        if e in "pP":
            items.props.append(self._property(self.i))
            return None
        if e in "AZzB":
            raise self.fail(f"bad escape \\{e}")
        return self._char_escape(in_class=True)

    def _class_text(self, items: _ClassItems, negate: bool) -> str:
        ranges = list(items.ranges)
        if self.flags.icase and self.flags.ascii:
            ranges.extend(ascii_case_partners(ranges))
        elif self._re2_icase() and any(lo <= cp <= hi for lo, hi in ranges for cp in I_FAMILY):
            ranges.extend((cp, cp) for cp in I_FAMILY)
        body = "".join(range_text(lo, hi) for lo, hi in ranges) + "".join(items.props)
        caret = "^" if negate else ""
        if not items.categories:
            pair = case_pair(ranges) if not (negate or items.props) else None
            if pair is not None and not self._re2_icase():
                return pair_text(pair)
            return f"[{caret}{body}]"
        cats = "".join(items.categories)
        if not self._re2_icase():
            return f"[{caret}{body}{cats}]"
        # Under Unicode IGNORECASE Python folds the literal members but not the \w-style
        # categories; RE2 would fold both, so the two halves are written apart.
        if not negate:
            return f"(?:(?-i:[{cats}])|[{body}])" if body else f"(?-i:[{cats}])"
        if not body or not intersects(ranges, unicode_ranges("cased")):
            # Python folds a class only when a member has another case.
            return f"(?-i:[^{body}{cats}])"
        raise self.fail(
            "a negated character class that mixes \\d/\\w/\\s with other members cannot be "
            "honoured exactly under re.IGNORECASE; drop the IGNORECASE flag or list the "
            "members without a category escape"
        )


class _TreeBuilder:
    """Reads the translator's tokens back into a tree for `boundaries.rewrite`."""

    def __init__(self, toks: list[_Tok], field: str) -> None:
        self.toks = toks
        self.field = field
        self.i = 0

    def build(self) -> Node:
        node = self._alternation()
        if self.i != len(self.toks):  # pragma: no cover - the translator balances groups
            raise ParamError(self.field, "unbalanced parenthesis")
        return node

    def _alternation(self) -> Node:
        branches = [self._sequence()]
        while self.i < len(self.toks) and self.toks[self.i].kind == "bar":
            self.i += 1
            branches.append(self._sequence())
        return branches[0] if len(branches) == 1 else Alt(branches)

    def _sequence(self) -> Node:
        items: list[Node] = []
        while self.i < len(self.toks) and self.toks[self.i].kind not in ("bar", "close"):
            tok = self.toks[self.i]
            self.i += 1
            if tok.kind == "quant":
                items.append(self._repeat(items, tok))
            else:
                items.append(self._item(tok))
        return Seq(items)

    def _repeat(self, items: list[Node], tok: _Tok) -> Node:
        last = items.pop() if items else None
        if last is None or isinstance(last, Assert | Zero):
            raise ParamError(self.field, "nothing to repeat")
        if isinstance(last, Rep):
            raise ParamError(self.field, "multiple repeat")
        return Rep(last, tok.lo, tok.hi)

    def _item(self, tok: _Tok) -> Node:
        if tok.kind == "open":
            body = self._alternation()
            self.i += 1  # the closing ")"
            return Seq((body,))  # a group: a quantifier after it applies to all of it
        if tok.kind == "zero":
            return Zero(tok.zero)
        if tok.kind == "assert":
            assert tok.node is not None
            return tok.node
        assert tok.kind == "leaf" and tok.exact is not None
        ranges = tok.exact()
        if ranges is None:
            raise ParamError(
                self.field,
                "a Unicode property (\\p{...}) cannot be combined with \\b, \\B or a $ that is "
                "not at the end: its code points are known only to the linear-time engine",
            )
        return Leaf(ranges)
