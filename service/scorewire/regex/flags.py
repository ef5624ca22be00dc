"""Python `re` flags for user patterns: their bits and names, which are refused, and the
flags in force at one point of a pattern.

The catalog's `flags` is Python's `re` flag bits (or Python's flag names, read by
`parse_flags`); `check_flags` refuses, naming the flag, what the linear-time engine
cannot honour. `FlagsInForce` is what the translator carries through a pattern, changed
by inline flags such as `(?i)` and `(?i-s:...)`.
"""

from __future__ import annotations

from scorewire.core.registry import ParamError

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


def check_flags(flags: int, field: str) -> None:
    """Refuse (a `ParamError(field, ...)` naming the flag) bits the engine cannot honour."""
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


class FlagsInForce:
    """The flags in force at one point of the pattern."""

    __slots__ = ("ascii", "dotall", "icase", "multiline", "verbose")

    def __init__(self, bits: int) -> None:
        self.icase = bool(bits & IGNORECASE)
        self.multiline = bool(bits & MULTILINE)
        self.dotall = bool(bits & DOTALL)
        self.ascii = bool(bits & ASCII)
        self.verbose = bool(bits & VERBOSE)

    def copy(self) -> FlagsInForce:
        """An independent copy (a group changes its own flags, not its parent's)."""
        new = FlagsInForce(0)
        new.icase, new.multiline = self.icase, self.multiline
        new.dotall, new.ascii, new.verbose = self.dotall, self.ascii, self.verbose
        return new

    def python_bits(self) -> int:
        """The flags that decide what one character matcher accepts, as Python bits."""
        return (IGNORECASE if self.icase else 0) | (ASCII if self.ascii else 0)

    def re2_icase(self) -> bool:
        """Whether RE2 folds case itself (under ASCII the translator writes the folding)."""
        return self.icase and not self.ascii

    def re2_letters(self) -> str:
        """RE2's own flags: case folding is done by hand under ASCII (see `re2_icase`)."""
        on = ("i" if self.icase and not self.ascii else "") + ("m" if self.multiline else "")
        on += "s" if self.dotall else ""
        off = "".join(f for f in "ims" if f not in on)
        return on + ("-" + off if off else "")
