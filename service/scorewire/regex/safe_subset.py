"""The safe regular-expression subset of compact checks, validated and then run on RE2.

A pattern is parsed by hand into a small tree, every limit of the subset is enforced on
that tree, and the tree is written back out as an explicit RE2 pattern, so that the
meaning never depends on an engine's defaults. Python's `re` is never used.

Semantics (the seed `002_…` is binding; where it is silent the choice is written here):

- Matching is a case-sensitive *substring* search; `^` is the start of the whole answer
  and `$` its very end (compiled to `\\A` / `\\z`: `$` does not match before a trailing
  newline, unlike Python's `$`).
- Supported: literals; escaped ASCII punctuation (`\\.`, `\\\\`, `\\-`, …); `\\d` `\\w`
  `\\s` `\\n` `\\r` `\\t`; dot; character classes with ranges, negated classes
  (`[^…]`); groups `(…)` (and `(?:…)`, which means the same for a match/no-match
  answer); alternatives `|` (an empty alternative matches the empty string); `?`, `*`,
  `+`; bounded counts `{m}`, `{m,n}` and `{m,}` (m copies then any number more).
- `\\d` is `[0-9]`, `\\w` is `[0-9A-Za-z_]`, `\\s` is the ASCII white space
  `[ \\t\\n\\v\\f\\r]` (Python's `re.ASCII` meaning), written out explicitly.
- Dot matches any code point except the line breaks `\\n` and `\\r`. Negated classes do
  match line breaks unless they list them.
- Every metacharacter ``\\ . ^ $ * + ? ( ) [ ] { } |`` must be escaped to be a literal,
  and so must `[` inside a class (RE2 would read `[[:alpha:]]` as a POSIX class).
  `-` is literal at either end of a class, `^` anywhere but first.
- Rejected, each with a message naming it: inline flags (`(?i)`, `(?i:…)`),
  lookarounds, backreferences (`\\1`, `(?P=n)`, `\\k<n>`), named groups, comments,
  atomic groups, Unicode-property escapes (`\\p{…}`, `\\P{…}`), every other escape
  (`\\b`, `\\A`, `\\D`, `\\x41`, …), lazy or possessive quantifiers, a quantifier on a
  quantifier or on an anchor, and nested repetition: a quantified group that already
  contains a quantifier (`(a+)+`, `(ab?){2}`), at any depth.
- Limits: at most 256 characters; at most 8 nesting levels of groups; at most 16
  alternatives in one alternation (`a|b|c` has three); counts up to 32 (both numbers
  of `{m,n}`); at most 128 compiled states (below). An empty pattern is rejected: it
  would match every answer.

Compiled states are the states of a Thompson NFA for the pattern after every bounded
count is expanded: one per literal, class, dot or anchor; one split per `?`, `*` and
`+`; for `{m,n}` m copies of the body plus n-m optional copies (each a copy and a
split); for `{m,}` m copies, the last looping back through a split (`e*` when m
is 0); one split per extra branch of an
alternation; plus one final match state. `^OK: [0-9]{1,3}$` is 12 states.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import re2

MAX_PATTERN_CHARS = 256
"""Longest accepted pattern, in code points."""
MAX_NESTING = 8
"""Deepest accepted nesting of groups."""
MAX_ALTERNATIVES = 16
"""Most branches in one alternation."""
MAX_COUNT = 32
"""Largest number accepted in a bounded count `{m,n}`."""
MAX_STATES = 128
"""Most compiled (Thompson NFA) states, bounded counts expanded."""

_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
_DIGIT = ((0x30, 0x39),)
_WORD = ((0x30, 0x39), (0x41, 0x5A), (0x5F, 0x5F), (0x61, 0x7A))
_SPACE = ((0x09, 0x0D), (0x20, 0x20))  # \t \n \v \f \r and space
_CLASS_ESCAPES = {"d": _DIGIT, "w": _WORD, "s": _SPACE}
_CHAR_ESCAPES = {"n": "\n", "r": "\r", "t": "\t"}
_LINE_BREAKS = ((0x0A, 0x0A), (0x0D, 0x0D))

Ranges = tuple[tuple[int, int], ...]


class UnsafePatternError(ValueError):
    """A pattern outside the safe subset or over one of its limits."""

    def __init__(self, message: str, position: int | None = None) -> None:
        where = f" (at character {position + 1})" if position is not None else ""
        super().__init__(message + where)
        self.message = message + where
        self.position = position


# --- the tree -------------------------------------------------------------------------


class _Set:
    """One code point drawn from `ranges` (or, when negated, from outside them)."""

    __slots__ = ("negated", "ranges")

    def __init__(self, ranges: Ranges, negated: bool = False) -> None:
        self.ranges = ranges
        self.negated = negated


class _Anchor:
    """`^` (start of the answer) or `$` (its end)."""

    __slots__ = ("end",)

    def __init__(self, end: bool) -> None:
        self.end = end


class _Concat:
    __slots__ = ("items",)

    def __init__(self, items: list[_Node]) -> None:
        self.items = items


class _Alt:
    __slots__ = ("branches",)

    def __init__(self, branches: list[_Node]) -> None:
        self.branches = branches


class _Group:
    __slots__ = ("body", "has_repeat")

    def __init__(self, body: _Node, has_repeat: bool) -> None:
        self.body = body
        self.has_repeat = has_repeat


class _Repeat:
    __slots__ = ("body", "max", "min")

    def __init__(self, body: _Node, lo: int, hi: int | None) -> None:
        self.body = body
        self.min = lo
        self.max = hi


_Node = _Set | _Anchor | _Concat | _Alt | _Group | _Repeat


def _has_repeat(node: _Node) -> bool:
    if isinstance(node, _Repeat):
        return True
    if isinstance(node, _Group):
        return node.has_repeat
    if isinstance(node, _Concat):
        return any(_has_repeat(n) for n in node.items)
    if isinstance(node, _Alt):
        return any(_has_repeat(n) for n in node.branches)
    return False


# --- the parser -----------------------------------------------------------------------


class _Parser:
    """Recursive descent over the pattern; recursion is bounded by MAX_NESTING."""

    def __init__(self, pattern: str) -> None:
        self.p = pattern
        self.i = 0

    def peek(self, offset: int = 0) -> str:
        j = self.i + offset
        return self.p[j] if j < len(self.p) else ""

    def parse(self) -> _Node:
        node = self.alternation(0)
        if self.i < len(self.p):  # only a ")" stops an alternation early
            raise UnsafePatternError("unbalanced ')': no group is open", self.i)
        return node

    def alternation(self, depth: int) -> _Node:
        start = self.i
        branches = [self.concat(depth)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.concat(depth))
            if len(branches) > MAX_ALTERNATIVES:
                raise UnsafePatternError(
                    f"more than {MAX_ALTERNATIVES} alternatives in one alternation; the limit "
                    f"is {MAX_ALTERNATIVES} alternatives",
                    start,
                )
        return branches[0] if len(branches) == 1 else _Alt(branches)

    def concat(self, depth: int) -> _Node:
        items: list[_Node] = []
        while self.i < len(self.p) and self.peek() not in "|)":
            items.append(self.quantified(self.atom(depth)))
        return items[0] if len(items) == 1 else _Concat(items)

    def atom(self, depth: int) -> _Node:
        c, at = self.peek(), self.i
        if c == "(":
            return self.group(depth)
        if c == "[":
            return self.char_class()
        if c == "\\":
            return self.escape()
        self.i += 1
        if c == ".":
            return _Set(_LINE_BREAKS, negated=True)
        if c in "^$":
            return _Anchor(end=c == "$")
        if c in "*+?":
            raise UnsafePatternError(f"nothing to repeat before {c!r}", at)
        if c == "{":
            if _count_at(self.p, at) is not None:
                raise UnsafePatternError("nothing to repeat before a count", at)
            raise UnsafePatternError("a literal '{' must be escaped as \\{", at)
        if c in "]}":
            raise UnsafePatternError(f"a literal {c!r} must be escaped as \\{c}", at)
        return _Set(((_code(c, at), _code(c, at)),))

    def group(self, depth: int) -> _Node:
        at = self.i
        self.i += 1
        if self.peek() == "?":
            if self.peek(1) != ":":
                raise UnsafePatternError(_group_construct(self.p, at), at)
            self.i += 2
        if depth + 1 > MAX_NESTING:
            raise UnsafePatternError(
                f"groups nest more than {MAX_NESTING} deep; the limit is {MAX_NESTING} "
                "nesting levels",
                at,
            )
        body = self.alternation(depth + 1)
        if self.peek() != ")":
            raise UnsafePatternError("missing ')': the group is never closed", at)
        self.i += 1
        return _Group(body, _has_repeat(body))

    def quantified(self, node: _Node) -> _Node:
        at = self.i
        bounds = self.quantifier()
        if bounds is None:
            return node
        if isinstance(node, _Anchor):
            raise UnsafePatternError("an anchor (^ or $) cannot be repeated", at)
        if _has_repeat(node):
            raise UnsafePatternError(
                "nested repetition: this quantified group already contains a quantifier",
                at,
            )
        after = self.i
        nxt = self.peek()
        if nxt and nxt in "?+":
            kind = "lazy" if nxt == "?" else "possessive"
            raise UnsafePatternError(
                f"{kind} quantifiers are not supported (nested repetition: a quantifier "
                "cannot follow a quantifier)",
                after,
            )
        if nxt == "*" or (nxt == "{" and _count_at(self.p, after) is not None):
            raise UnsafePatternError(
                "nested repetition: a quantifier cannot follow a quantifier", after
            )
        return _Repeat(node, *bounds)

    def quantifier(self) -> tuple[int, int | None] | None:
        c, at = self.peek(), self.i
        if c and c in "*+?":
            self.i += 1
            return {"*": (0, None), "+": (1, None), "?": (0, 1)}[c]
        if c != "{":
            return None
        count = _count_at(self.p, at)
        if count is None:
            if _lowerless_count_at(self.p, at):
                raise UnsafePatternError("a count needs a lower bound: write {0,n}", at)
            raise UnsafePatternError(
                "malformed count: write {m}, {m,n} or {m,}, or escape '{' as \\{", at
            )
        lo, hi, end = count
        for n in (lo, hi):
            if n is not None and n > MAX_COUNT:
                raise UnsafePatternError(
                    f"count {n} is over the limit: counts go up to {MAX_COUNT}", at
                )
        if hi is not None and lo > hi:
            raise UnsafePatternError(f"count {{{lo},{hi}}} has its minimum above its maximum", at)
        self.i = end
        return lo, hi

    def escape(self) -> _Node:
        at = self.i
        got = self.escape_member(in_class=False)
        if isinstance(got, str):
            cp = _code(got, at)
            return _Set(((cp, cp),))
        return _Set(got)

    def escape_member(self, *, in_class: bool) -> str | Ranges:
        """Read `\\x` at self.i: a single character (str) or a class escape (ranges)."""
        at = self.i
        c = self.peek(1)
        if not c:
            raise UnsafePatternError("the pattern ends with a lone backslash", at)
        self.i += 2
        if c in _CLASS_ESCAPES:
            return _CLASS_ESCAPES[c]
        if c in _CHAR_ESCAPES:
            return _CHAR_ESCAPES[c]
        if c in _PUNCTUATION:
            return c
        raise UnsafePatternError(_escape_construct(c, in_class), at)

    def char_class(self) -> _Node:
        start = self.i
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        ranges: list[tuple[int, int]] = []
        while True:
            c, at = self.peek(), self.i
            if not c:
                raise UnsafePatternError("missing ']': the character class is never closed", start)
            if c == "]":
                if not ranges:
                    raise UnsafePatternError(
                        "empty character class; a literal ']' must be escaped as \\]", at
                    )
                self.i += 1
                break
            lo = self.class_member()
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                dash = self.i
                self.i += 1
                hi = self.class_member()
                if not isinstance(lo, str) or not isinstance(hi, str):
                    raise UnsafePatternError(
                        "a range cannot start or end with \\d, \\w or \\s", dash
                    )
                a, b = _code(lo, at), _code(hi, dash)
                if a > b:
                    raise UnsafePatternError(f"range {lo!r}-{hi!r} is out of order", at)
                ranges.append((a, b))
            elif isinstance(lo, str):
                cp = _code(lo, at)
                ranges.append((cp, cp))
            else:
                ranges.extend(lo)
        return _Set(tuple(ranges), negated=negated)

    def class_member(self) -> str | Ranges:
        c, at = self.peek(), self.i
        if c == "\\":
            return self.escape_member(in_class=True)
        if c == "[":
            raise UnsafePatternError(
                "a literal '[' inside a character class must be escaped as \\[ "
                "(POSIX classes and nested sets are not supported)",
                at,
            )
        self.i += 1
        return c


def _code(c: str, at: int) -> int:
    cp = ord(c)
    if 0xD800 <= cp <= 0xDFFF:
        raise UnsafePatternError(f"the pattern holds an unpaired surrogate U+{cp:04X}", at)
    return cp


def _lowerless_count_at(p: str, at: int) -> bool:
    """True when `{,n}` starts at `at` (Python reads it as {0,n}, RE2 as a literal)."""
    j = _digits(p, at + 2)
    return p[at + 1 : at + 2] == "," and j > at + 2 and p[j : j + 1] == "}"


def _digits(p: str, j: int) -> int:
    while j < len(p) and "0" <= p[j] <= "9":
        j += 1
    return j


def _count_at(p: str, at: int) -> tuple[int, int | None, int] | None:
    """Parse `{m}`, `{m,n}` or `{m,}` at `at`: (m, n or None, index after '}')."""
    j = _digits(p, at + 1)
    if j == at + 1 or j >= len(p):
        return None
    lo = int(p[at + 1 : j])
    if p[j] == "}":
        return lo, lo, j + 1
    if p[j] != ",":
        return None
    k = _digits(p, j + 1)
    if k >= len(p) or p[k] != "}":
        return None
    hi = int(p[j + 1 : k]) if k > j + 1 else None
    return lo, hi, k + 1


def _group_construct(p: str, at: int) -> str:
    """Name the unsupported `(?…` construct starting at `at`."""
    rest = p[at + 2 : at + 4]
    if rest[:1] in ("=", "!") or rest in ("<=", "<!"):
        return "lookarounds ((?=…), (?!…), (?<=…), (?<!…)) are not supported"
    if rest == "P=":
        return "backreferences are not supported"
    if rest[:1] in ("P", "<", "'"):
        return "named groups are not supported; use a plain group (…)"
    if rest[:1] == "#":
        return "comments (?#…) are not supported"
    if rest[:1] == ">":
        return "atomic groups are not supported"
    if rest[:1] == "(":
        return "conditional groups are not supported"
    return "flags are not supported (inline flags such as (?i) or (?s:…))"


def _escape_construct(c: str, in_class: bool) -> str:
    """Name the unsupported escape `\\c`."""
    if c.isdigit() and c != "0":
        return f"backreferences (\\{c}) are not supported"
    if c == "k":
        return "backreferences (\\k<name>) are not supported"
    if c in "pP":
        return f"Unicode-property escapes (\\{c}{{…}}) are not supported"
    if c in "bBAZzG" and not in_class:
        return f"the anchor \\{c} is not supported; use ^ and $ for the whole answer"
    if c in "DWS":
        return f"\\{c} is not supported; write [^\\{c.lower()}]"
    return (
        f"unsupported escape \\{c}: only \\d \\w \\s \\n \\r \\t and escaped punctuation "
        "are supported"
    )


# --- limits on the tree ---------------------------------------------------------------


def _states(node: _Node) -> int:
    """Thompson NFA states of `node`, bounded counts expanded (the final match excluded)."""
    if isinstance(node, _Set | _Anchor):
        return 1
    if isinstance(node, _Concat):
        return sum(_states(n) for n in node.items)
    if isinstance(node, _Alt):
        return sum(_states(n) for n in node.branches) + len(node.branches) - 1
    if isinstance(node, _Group):
        return _states(node.body)
    body = _states(node.body)
    if node.max is None:  # e{m,} is m-1 copies then e+ (e* when m is 0)
        return max(node.min, 1) * body + 1
    return node.min * body + (node.max - node.min) * (body + 1)


# --- writing RE2 ----------------------------------------------------------------------


def _char(cp: int) -> str:
    c = chr(cp)
    return c if c.isascii() and (c.isalnum() or c == "_") else f"\\x{{{cp:x}}}"


def _emit(node: _Node) -> str:
    if isinstance(node, _Set):
        if not node.negated and len(node.ranges) == 1 and node.ranges[0][0] == node.ranges[0][1]:
            return _char(node.ranges[0][0])
        body = "".join(_char(a) if a == b else f"{_char(a)}-{_char(b)}" for a, b in node.ranges)
        return f"[{'^' if node.negated else ''}{body}]"
    if isinstance(node, _Anchor):
        return "\\z" if node.end else "\\A"
    if isinstance(node, _Concat):
        return "".join(_emit(n) for n in node.items)
    if isinstance(node, _Alt):
        return "|".join(_emit(n) for n in node.branches)
    if isinstance(node, _Group):
        return f"(?:{_emit(node.body)})"
    body = _emit(node.body)
    if node.max is None:
        suffix = {0: "*", 1: "+"}.get(node.min, f"{{{node.min},}}")
    elif node.min == node.max:
        suffix = f"{{{node.min}}}"
    else:
        suffix = "?" if (node.min, node.max) == (0, 1) else f"{{{node.min},{node.max}}}"
    return body + suffix


_UNANCHORED = re2._re2.RE2.Anchor.UNANCHORED
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a failed compile would otherwise write to stderr
_OPTIONS.never_capture = True  # only match/no match is ever asked
_OPTIONS.case_sensitive = True
_OPTIONS.longest_match = False
_OPTIONS.dot_nl = False
_OPTIONS.posix_syntax = False


class SafeRegex:
    """A validated subset pattern compiled for RE2; `search` answers match or no match."""

    __slots__ = ("_match", "_regexp", "pattern", "re2_pattern", "states")

    pattern: str
    """The pattern as the user wrote it."""
    re2_pattern: str
    """The explicit RE2 pattern it was translated to."""
    states: int
    """Its compiled states (see the module docstring), at most MAX_STATES."""

    def __init__(self, pattern: str, re2_pattern: str, states: int) -> None:
        self.pattern = pattern
        self.re2_pattern = re2_pattern
        self.states = states
        try:
            self._regexp = re2.compile(re2_pattern, _OPTIONS)
        except re2.error as err:  # pragma: no cover - the translation is always valid RE2
            raise UnsafePatternError(f"the regular-expression engine rejected it: {err}") from err
        # A yes/no answer needs no match object: the wrapper's RE2::Match is several
        # times faster than its search(); the public search() stays as the fallback.
        self._match: Callable[..., Any] | None = getattr(
            getattr(self._regexp, "_regexp", None), "Match", None
        )

    def search(self, text: str) -> bool:
        """True when the pattern matches somewhere in `text` (linear time)."""
        # surrogatepass keeps lone surrogates (possible in JSON-decoded text) from
        # raising; as invalid UTF-8 they match no character class or literal.
        data = text.encode("utf-8", "surrogatepass")
        if self._match is not None:
            return bool(self._match(_UNANCHORED, data, 0, len(data))[0][0] != -1)
        return self._regexp.search(data) is not None

    def __repr__(self) -> str:
        return f"SafeRegex({self.pattern!r})"


def parse_safe_regex(pattern: str) -> tuple[str, int]:
    """Validate `pattern` against the subset: (RE2 translation, compiled states).

    Raises UnsafePatternError naming the construct or limit that rules it out.
    """
    if not pattern:
        raise UnsafePatternError("the pattern is empty; it would match every answer")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise UnsafePatternError(
            f"the pattern is {len(pattern)} characters; the limit is {MAX_PATTERN_CHARS} characters"
        )
    tree = _Parser(pattern).parse()
    states = _states(tree) + 1
    if states > MAX_STATES:
        raise UnsafePatternError(
            f"the pattern compiles to {states} states; the limit is {MAX_STATES} compiled states"
        )
    return _emit(tree), states


def compile_safe_regex(pattern: str) -> SafeRegex:
    """Validate `pattern` against the subset and compile it for RE2 (once per check)."""
    re2_pattern, states = parse_safe_regex(pattern)
    return SafeRegex(pattern, re2_pattern, states)
