"""The state of one pattern being translated, shared by the translator's parts.

`translate` walks the pattern once; each syntax family (`escapes`, `classes`, `groups`,
`quantifiers`, `anchors`) reads its construct at the reader's position, moves the
position past it and writes `Tok`s: pieces of RE2 text tagged with what they are, from
which a pattern holding an assertion is rebuilt (see `boundaries`).
"""

from __future__ import annotations

from collections.abc import Callable

from scorewire.core.registry import ParamError
from scorewire.regex.codepoints import Ranges
from scorewire.regex.flags import FlagsInForce
from scorewire.regex.tree import Assert


class Tok:
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


class PatternReader:
    """A Python-syntax pattern being read: the position, the flags, the tokens written."""

    def __init__(self, pattern: str, flags: int, field: str) -> None:
        if not isinstance(pattern, str):
            raise ParamError(field, "the pattern must be a string")
        self.p = pattern
        self.i = 0
        """The position reached in `p`."""
        self.field = field
        self.flags = FlagsInForce(flags)
        """The flags in force at `i`."""
        self.stack: list[FlagsInForce] = []
        """The flags of each open group's parent, restored when the group closes."""
        self.out: list[Tok] = []
        self.rewrite = False
        """An assertion RE2 cannot say directly was read: rebuild (see `boundaries`)."""

    def fail(self, message: str, at: int | None = None) -> ParamError:
        """A `ParamError` on the pattern's field, naming the position."""
        pos = self.i if at is None else at
        return ParamError(self.field, f"{message} (at position {pos})")

    def emit(self, kind: str, text: str) -> Tok:
        """Write one token (see `Tok`) and return it, for the caller to fill in."""
        tok = Tok(kind, text)
        self.out.append(tok)
        return tok
