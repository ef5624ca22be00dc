"""The pattern as a tree, for rebuilding a pattern around `\\b`, `\\B` and `$`.

`Seq`, `Alt` and `Rep` are concatenation, alternation and repetition; `Leaf` is one
character from an exact set of code points, `Zero` an anchor RE2 honours itself and
`Assert` one of the three assertions RE2 cannot state as Python means them (see
`boundaries`). `emit` writes an assertion-free tree back as RE2 text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from scorewire.regex.codepoints import Ranges
from scorewire.regex.re2_text import NOTHING, set_text


class Node:
    """A node of the pattern tree; subclasses are immutable."""

    __slots__ = ()


class Leaf(Node):
    """One character from an exact set of code points."""

    __slots__ = ("ranges",)

    def __init__(self, ranges: Ranges) -> None:
        self.ranges = ranges


class Zero(Node):
    """A zero-width anchor RE2 evaluates itself (`\\A`, `\\z`, `(?m:^)`, `(?m:$)`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class Assert(Node):
    """`\\b` (kind "b"), `\\B` ("B"), both ASCII or Unicode, or Python's `$` ("$")."""

    __slots__ = ("ascii", "kind")

    def __init__(self, kind: str, ascii: bool) -> None:
        self.kind = kind
        self.ascii = ascii


class Seq(Node):
    """A concatenation; the empty one matches the empty string."""

    __slots__ = ("items",)

    def __init__(self, items: Sequence[Node]) -> None:
        self.items = tuple(items)


class Alt(Node):
    """An alternation of at least one branch."""

    __slots__ = ("branches",)

    def __init__(self, branches: Sequence[Node]) -> None:
        self.branches = tuple(branches)


class Rep(Node):
    """`body{lo,hi}`; `hi` None is unbounded."""

    __slots__ = ("body", "hi", "lo")

    def __init__(self, body: Node, lo: int, hi: int | None) -> None:
        self.body = body
        self.lo = lo
        self.hi = hi


EMPTY = Seq(())


def has_assert(node: Node) -> bool:
    """Whether `node` holds an `Assert` anywhere."""
    if isinstance(node, Assert):
        return True
    if isinstance(node, Seq):
        return any(has_assert(n) for n in node.items)
    if isinstance(node, Alt):
        return any(has_assert(n) for n in node.branches)
    if isinstance(node, Rep):
        return has_assert(node.body)
    return False


def assert_kinds(node: Node) -> set[tuple[str, bool]]:
    """The (kind, ascii) of every `Assert` in `node`."""
    if isinstance(node, Assert):
        return {(node.kind, node.ascii)}
    children: Iterable[Node] = ()
    if isinstance(node, Seq):
        children = node.items
    elif isinstance(node, Alt):
        children = node.branches
    elif isinstance(node, Rep):
        children = (node.body,)
    return set().union(*(assert_kinds(c) for c in children)) if children else set()


def seq(*items: Node | None) -> Node | None:
    """A concatenation, or None (no string) when a part matches nothing."""
    out: list[Node] = []
    for item in items:
        if item is None:
            return None
        if isinstance(item, Seq):
            out.extend(item.items)
        else:
            out.append(item)
    return out[0] if len(out) == 1 else Seq(out)


def alt(branches: Iterable[Node | None]) -> Node | None:
    """An alternation of the branches that match something, or None when none does."""
    kept = [b for b in branches if b is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Alt(kept)


def emit(node: Node | None) -> str:
    """RE2 text for an assertion-free tree, independent of flags (no (?i), (?m), (?s))."""
    if node is None:
        return NOTHING
    if isinstance(node, Leaf):
        return set_text(node.ranges) if node.ranges else NOTHING
    if isinstance(node, Zero):
        return node.text
    if isinstance(node, Seq):
        return "".join(f"(?:{emit(n)})" if isinstance(n, Alt) else emit(n) for n in node.items)
    if isinstance(node, Alt):
        return "(?:" + "|".join(emit(b) for b in node.branches) + ")"
    assert isinstance(node, Rep)
    body = emit(node.body)
    if node.hi is None:
        count = {0: "*", 1: "+"}.get(node.lo, f"{{{node.lo},}}")
    elif node.lo == node.hi:
        count = f"{{{node.lo}}}"
    else:
        count = f"{{{node.lo},{node.hi}}}"
    return f"(?:{body}){count}"
