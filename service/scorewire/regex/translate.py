"""A Python-syntax pattern translated, in one walk, to the RE2 pattern that means the same.

The walk dispatches on each character to the part that reads its syntax (`escapes`,
`classes`, `groups`, `quantifiers`, `anchors`); the rules are listed in `engine`. A
pattern holding an assertion RE2 cannot state (`\\b`, `\\B`, a `$` before more pattern)
is read back from its tokens into a tree and rebuilt by `boundaries`.
"""

from __future__ import annotations

from collections.abc import Callable

from scorewire.core.registry import ParamError
from scorewire.regex import boundaries
from scorewire.regex.anchors import read_caret, read_dollar
from scorewire.regex.classes import read_class
from scorewire.regex.codepoints import ALL, NOT_NEWLINE, Ranges, fold_exactly
from scorewire.regex.escapes import read_escape, write_literal
from scorewire.regex.flags import IGNORECASE
from scorewire.regex.groups import read_close, read_leading_flags, read_open
from scorewire.regex.quantifiers import read_count, read_quantifier
from scorewire.regex.reader import PatternReader, Tok
from scorewire.regex.tree import Alt, Assert, Leaf, Node, Rep, Seq, Zero

# Python's VERBOSE skips these outside classes (sre_parse.WHITESPACE).
_VERBOSE_SPACE = frozenset(" \t\n\r\v\f")


def translate(pattern: str, flags: int, field: str) -> tuple[str, bool]:
    """The RE2 pattern for `pattern` under Python `re` flag bits `flags`, and whether it
    was rebuilt around an assertion (see `boundaries`). Raises `ParamError(field, ...)`
    for a construct that cannot be honoured exactly."""
    r = PatternReader(pattern, flags, field)
    read_leading_flags(r)
    start_flags = r.flags.re2_letters()
    n = len(r.p)
    while r.i < n:
        if r.flags.verbose and _skip_verbose(r):
            continue
        start = r.i
        mark = len(r.out)
        _read_atom(r)
        for tok in r.out[mark:]:
            if tok.kind == "leaf" and tok.exact is None:
                tok.exact = _exact_literal(r, start, tok.lo)
    if r.stack:
        raise r.fail("missing ), unterminated group")
    if r.rewrite:
        return _rewritten(r), True
    return f"(?{start_flags})" + "".join(t.text for t in r.out), False


def _read_atom(r: PatternReader) -> None:
    c = r.p[r.i]
    if c == "\\":
        read_escape(r)
    elif c == "[":
        read_class(r)
    elif c == "(":
        read_open(r)
    elif c == ")":
        read_close(r)
    elif c == "$":
        read_dollar(r)
    elif c == "{":
        if not read_count(r):
            write_literal(r, ord("{"))
            r.i += 1
    elif c in "*+?":
        read_quantifier(r)
    elif c == "^":
        read_caret(r)
    elif c == "|":
        r.emit("bar", "|")
        r.i += 1
    elif c == ".":
        dotall = r.flags.dotall
        r.emit("leaf", ".").exact = lambda: ALL if dotall else NOT_NEWLINE
        r.i += 1
    else:
        write_literal(r, ord(c))
        r.i += 1


def _skip_verbose(r: PatternReader) -> bool:
    """Under VERBOSE, skip white space or a `#` comment at the position; True if skipped."""
    c = r.p[r.i]
    if c in _VERBOSE_SPACE:
        r.i += 1
        return True
    if c == "#":
        end = r.p.find("\n", r.i)
        r.i = len(r.p) if end < 0 else end + 1
        return True
    return False


def _exact_literal(r: PatternReader, start: int, cp: int) -> Callable[[], Ranges | None]:
    """The exact set of the literal `cp` written at p[start:i] (case folded)."""
    text, bits = r.p[start : r.i], r.flags.python_bits()

    def exact() -> Ranges:
        one = ((cp, cp),)
        return fold_exactly(one, text, bits) if bits & IGNORECASE else one

    return exact


def _rewritten(r: PatternReader) -> str:
    """The pattern rebuilt without `\\b`, `\\B` and `$` (see `boundaries`)."""
    tree = _TreeBuilder(r.out, r.field).build()
    try:
        return boundaries.rewrite(tree)
    except boundaries.Unsupported as err:
        raise ParamError(r.field, f"{err} (the pattern holds \\b, \\B or $)") from None


class _TreeBuilder:
    """Reads the translator's tokens back into a tree for `boundaries.rewrite`."""

    def __init__(self, toks: list[Tok], field: str) -> None:
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

    def _repeat(self, items: list[Node], tok: Tok) -> Node:
        last = items.pop() if items else None
        if last is None or isinstance(last, Assert | Zero):
            raise ParamError(self.field, "nothing to repeat")
        if isinstance(last, Rep):
            raise ParamError(self.field, "multiple repeat")
        return Rep(last, tok.lo, tok.hi)

    def _item(self, tok: Tok) -> Node:
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
