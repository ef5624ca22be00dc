"""The parts of an assertion-free tree's language that `boundaries` joins paths with.

Where two parts of a pattern meet at an assertion, the condition falls on the last
character of the one and the first character of the other; `SubLanguages` gives, as
trees, the strings of a tree that consume nothing, that start or end with a character
from a given set, or that are exactly one newline.
"""

from __future__ import annotations

from collections.abc import Callable

from scorewire.regex.codepoints import ALL, Ranges, intersect, union
from scorewire.regex.tree import EMPTY, Alt, Leaf, Node, Rep, Seq, Zero, alt, seq


class SubLanguages:
    """Sub-languages of an assertion-free tree: its empty, first- and last-character parts."""

    def __init__(self) -> None:
        self._memo: dict[tuple[int, str, Ranges], Node | None] = {}
        self._chars: dict[int, Ranges] = {}
        self._keep: list[Node] = []  # keeps memoised nodes alive so their ids stay unique

    def _cached(
        self, kind: str, node: Node, cell: Ranges, fn: Callable[[], Node | None]
    ) -> Node | None:
        key = (id(node), kind, cell)
        if key not in self._memo:
            self._keep.append(node)
            self._memo[key] = fn()
        return self._memo[key]

    def eps(self, node: Node) -> Node | None:
        """The paths through `node` that consume nothing (keeping their anchors)."""
        if isinstance(node, Leaf):
            return None
        if isinstance(node, Zero):
            return node
        if isinstance(node, Seq):
            return seq(*(self.eps(n) for n in node.items))
        if isinstance(node, Alt):
            return alt(self.eps(n) for n in node.branches)
        assert isinstance(node, Rep)
        return EMPTY if node.lo == 0 else self.eps(node.body)

    def first(self, node: Node, cell: Ranges) -> Node | None:
        """The non-empty strings of `node` whose first character is in `cell`."""
        return self._cached("f", node, cell, lambda: self._whole(node, cell, self._first))

    def _whole(
        self, node: Node, cell: Ranges, split: Callable[[Node, Ranges], Node | None]
    ) -> Node | None:
        """`split(node, cell)`, short-cut when every character of `node` is in `cell` or none
        is: the restricted tree is then `node` itself (its non-empty part) or nothing, and
        not a copy of it (copies of large classes are what makes a rewrite big)."""
        chars = self.chars(node)
        inside = intersect(chars, cell)
        if not inside:
            return None
        if inside == chars:
            whole = self._non_empty(node)
            if whole is not None:
                return whole
        return split(node, cell)

    def chars(self, node: Node) -> Ranges:
        """Every code point `node` can consume, anywhere."""
        got = self._chars.get(id(node))
        if got is None:
            if isinstance(node, Leaf):
                ranges = node.ranges
            elif isinstance(node, Seq):
                ranges = union(*(self.chars(n) for n in node.items))
            elif isinstance(node, Alt):
                ranges = union(*(self.chars(n) for n in node.branches))
            elif isinstance(node, Rep):
                ranges = self.chars(node.body)
            else:
                ranges = ()
            self._keep.append(node)
            got = self._chars[id(node)] = ranges
        return got

    def _non_empty(self, node: Node) -> Node | None:
        """`node` without its empty string, when that is `node` itself or a Rep from 1."""
        if self.eps(node) is None:
            return node
        if isinstance(node, Rep) and node.lo == 0 and self.eps(node.body) is None:
            return Rep(node.body, 1, node.hi) if node.hi != 0 else None
        return None

    def _first(self, node: Node, cell: Ranges) -> Node | None:
        if isinstance(node, Leaf):
            got = intersect(node.ranges, cell)
            return Leaf(got) if got else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return alt(self.first(n, cell) for n in node.branches)
        if isinstance(node, Seq):
            options: list[Node | None] = []
            before: list[Node | None] = []
            for k, item in enumerate(node.items):
                options.append(seq(*before, self.first(item, cell), *node.items[k + 1 :]))
                empty = self.eps(item)
                if empty is None:
                    break
                before.append(empty)
            return alt(options)
        assert isinstance(node, Rep)
        first = self.first(node.body, cell)
        return alt(
            [seq(first, self._rest(node)), seq(self._skipped(node), first, self._tail(node))]
        )

    def last(self, node: Node, cell: Ranges) -> Node | None:
        """The non-empty strings of `node` whose last character is in `cell`."""
        return self._cached("l", node, cell, lambda: self._whole(node, cell, self._last))

    def _last(self, node: Node, cell: Ranges) -> Node | None:
        if isinstance(node, Leaf):
            got = intersect(node.ranges, cell)
            return Leaf(got) if got else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return alt(self.last(n, cell) for n in node.branches)
        if isinstance(node, Seq):
            options: list[Node | None] = []
            after: list[Node | None] = []
            for k in range(len(node.items) - 1, -1, -1):
                item = node.items[k]
                options.append(seq(*node.items[:k], self.last(item, cell), *after))
                empty = self.eps(item)
                if empty is None:
                    break
                after.insert(0, empty)
            return alt(options)
        assert isinstance(node, Rep)
        last = self.last(node.body, cell)
        return alt([seq(self._rest(node), last), seq(self._tail(node), last, self._skipped(node))])

    def exact_newline(self, node: Node) -> Node | None:
        """The paths of `node` that consume exactly one newline and nothing else."""
        return self._cached("n", node, ALL, lambda: self._exact_newline(node))

    def _exact_newline(self, node: Node) -> Node | None:
        if isinstance(node, Leaf):
            return Leaf(((10, 10),)) if intersect(node.ranges, ((10, 10),)) else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return alt(self.exact_newline(n) for n in node.branches)
        if isinstance(node, Seq):
            options = []
            for k, item in enumerate(node.items):
                around = (
                    [self.eps(n) for n in node.items[:k]],
                    [self.eps(n) for n in node.items[k + 1 :]],
                )
                options.append(seq(*around[0], self.exact_newline(item), *around[1]))
            return alt(options)
        assert isinstance(node, Rep)
        if node.hi == 0:
            return None
        newline = self.exact_newline(node.body)
        if node.lo <= 1:
            return newline
        # the other (at least one) iterations are empty, before or after the newline
        empty = self.eps(node.body)
        return alt([seq(empty, newline), seq(newline, empty)])

    def _rest(self, node: Rep) -> Node | None:
        """The iterations after (or before) the first (last) one, when that one is non-empty."""
        if node.hi == 0:
            return None
        hi = None if node.hi is None else node.hi - 1
        return EMPTY if hi == 0 else Rep(node.body, max(node.lo - 1, 0), hi)

    def _skipped(self, node: Rep) -> Node | None:
        """Empty iterations before the first (after the last) non-empty one, when needed.

        Only when more than one iteration is required: the required ones may then be
        empty at the edge, and their anchors hold there (`(^){2}` is `^`).
        """
        if node.lo < 2 or (node.hi is not None and node.hi < 2):
            return None
        return self.eps(node.body)

    def _tail(self, node: Rep) -> Node | None:
        """With empty iterations skipped at the edge, the rest may be any number up to hi-2."""
        if node.hi is None:
            return Rep(node.body, 0, None)
        return EMPTY if node.hi == 2 else Rep(node.body, 0, node.hi - 2)
