"""Python's `\\b`, `\\B` and `$` on RE2, exactly, without lookaround and in linear time.

RE2 cannot say these three assertions the way Python means them: its `\\b` is ASCII-only
and works on UTF-8 bytes (so `\\B` also matches *inside* a multi-byte character), and its
`$` is the very end while Python's `$` outside MULTILINE also matches just before a final
newline. Each of them is a condition on the character before and the character after a
position. This module removes them from the pattern by pushing each condition onto the
characters next to it:

- The pattern is a tree (`Seq`, `Alt`, `Rep`, `Leaf` = one character from an exact set of
  code points, `Zero` = an anchor RE2 honours itself, `Assert` = `\\b`, `\\B` or `$`).
- The code points are split into a few *cells* that the assertions can tell apart (word
  and non-word characters, ASCII word characters under `re.ASCII`, the newline for `$`).
- Every subtree becomes a few *paths* `(pre, core, post)`: an assertion-free `core` that
  may match only when the character before it is in `pre` and the one after it in `post`
  (cells, the text's edge, or `NLZ`: "a newline that ends the text"). Where two paths
  meet, the conditions are resolved by restricting the last character of the one and the
  first character of the other (`sublanguages`); what is left at the ends of the whole
  pattern is checked by consuming the neighbouring character (a yes/no search may consume
  more than the match) or by `\\A`/`\\z`.

The result is an ordinary RE2 pattern, still matched by RE2's automata in linear time.
Repetitions are kept as repetitions. A group holding an assertion is written out when it
repeats a bounded number of times (at most `MAX_UNROLL`); one that repeats without bound
(`(\\bab)+`) becomes a small automaton over its iterations, whose states are "which
paths may come next, and what the last one still asks of the next character", written
back as a regular expression by Kleene's construction (`_Rewriter.star`). Restricting a
part whose characters all lie in one cell returns the part itself, not a copy: the
rewritten pattern stays a few times the size of the big Unicode classes it names
(`\\bcat\\b` is 21 kB of RE2 text, `^\\s*\\b\\w+\\b\\s*$` 57 kB). A rewrite that grows past
`MAX_REWRITE_UNITS` is refused at load. Patterns without these assertions never come
here: they keep their direct translation.
"""

from __future__ import annotations

from collections.abc import Sequence

from scorewire.regex.codepoints import (
    ALL,
    ASCII_WORD,
    Ranges,
    complement,
    intersect,
    unicode_ranges,
    union,
)
from scorewire.regex.sublanguages import SubLanguages
from scorewire.regex.tree import (
    EMPTY,
    Alt,
    Assert,
    Leaf,
    Node,
    Rep,
    Seq,
    Zero,
    alt,
    assert_kinds,
    emit,
    has_assert,
    seq,
)

MAX_UNROLL = 8
"""A group holding `\\b`, `\\B` or `$` may repeat at most this many times (`{0,8}`)."""
MAX_REWRITE_UNITS = 60_000
"""The largest rewritten pattern, in code-point ranges and operators (~10 RE2 characters
each). The rewrite can grow exponentially with the number of assertions whose neighbours
may be empty (`(?:\\w*\\b\\s*){6}` written out): past this it is refused at once, before
it costs seconds, instead of being left to RE2's memory limit (8 MiB)."""

EDGE = "edge"
"""The start (before) or the end (after) of the text: no character at all."""
NLZ = "nlz"
"""After a position: a newline that is the last character of the text (Python's `$`)."""


class Unsupported(Exception):
    """A pattern this construction cannot rewrite exactly; the message names why."""


# --- paths with conditions at both ends --------------------------------------------------

Cond = frozenset[object]
Path = tuple[Cond, Node, Cond]


class _Rewriter:
    """Rewrites a tree holding assertions into one assertion-free RE2 pattern."""

    def __init__(self, cells: list[Ranges], newline_cell: int | None) -> None:
        self.cells = cells
        self.newline_cell = newline_cell
        self.pre_all: Cond = frozenset([EDGE, *range(len(cells))])
        self.post_all: Cond = self.pre_all | ({NLZ} if newline_cell is not None else set())
        self.restrict = SubLanguages()
        self._cell_ranges: dict[Cond, Ranges] = {}
        self._sizes: dict[int, tuple[Node, int]] = {}

    def cell_ranges(self, cond: Cond) -> Ranges:
        """The code points of the cells in `cond` (memoised: the cells are large)."""
        got = self._cell_ranges.get(cond)
        if got is None:
            got = self._cell_ranges[cond] = union(
                *(self.cells[c] for c in cond if isinstance(c, int))
            )
        return got

    def meet_post(self, a: Cond, b: Cond) -> Cond:
        """Both conditions on the character after a position (NLZ is a kind of newline)."""
        both = a & b
        nl = self.newline_cell
        a_newline = NLZ in a or nl in a
        b_newline = NLZ in b or nl in b
        if nl is not None and ((NLZ in a and b_newline) or (NLZ in b and a_newline)):
            both = both | {NLZ}
        return both

    # An assertion, as the (before, after) pairs of cells it allows.

    def assertion(self, node: Assert) -> list[Path]:
        if node.kind == "$":
            return [(self.pre_all, EMPTY, frozenset([EDGE, NLZ]))]
        word = {k for k, cell in enumerate(self.cells) if _is_word_cell(cell, node.ascii)}
        nonword = set(range(len(self.cells))) - word
        w, n = frozenset(word), frozenset(nonword | {EDGE})
        n_after = n | ({NLZ} if self.newline_cell is not None else set())
        if node.kind == "b":
            return [(w, EMPTY, n_after), (n, EMPTY, w)]
        # Python's \B never matches in an empty text (edge on both sides): sre refuses it.
        n_cells = frozenset(nonword)
        return [
            (w, EMPTY, w),
            (n_cells, EMPTY, n_after),
            (frozenset([EDGE]), EMPTY, n_after - {EDGE}),
        ]

    def paths(self, node: Node) -> list[Path]:
        if not has_assert(node):
            return [(self.pre_all, node, self.post_all)]
        if isinstance(node, Assert):
            return self.assertion(node)
        if isinstance(node, Alt):
            return _merge([p for b in node.branches for p in self.paths(b)])
        if isinstance(node, Seq):
            acc: list[Path] = [(self.pre_all, EMPTY, self.post_all)]
            for item in node.items:
                acc = self.concat(acc, self.paths(item))
                self.check_size(acc)
            return acc
        assert isinstance(node, Rep)
        if node.hi is None:
            # x{m,} is m copies of x, then x*
            if node.lo > MAX_UNROLL:
                raise Unsupported(
                    f"a group holding \\b, \\B or $ must repeat at least {node.lo} times; "
                    f"the linear-time engine writes out at most {MAX_UNROLL} ({{8,}})"
                )
            head = self.paths(Seq([node.body] * node.lo)) if node.lo else None
            star = self.star(node.body)
            return self.concat(head, star) if head is not None else star
        return self.paths(_unroll(node))

    def star(self, body: Node) -> list[Path]:
        """The paths of `body*` when `body` holds an assertion.

        Empty iterations only add conditions, so `body*` is any number of non-empty ones.
        Between two non-empty iterations the conditions meet on the last character of the
        one and the first of the next, so the iterations form an automaton whose state is
        (the last character's cell, the pending condition after it); its language is
        written as a regular expression by Kleene's construction (a handful of states).
        """
        parts: list[Path] = []
        for pre, core, post in self.paths(body):
            ne = self.restrict.first(core, ALL)  # the iteration's non-empty strings
            if ne is not None:
                parts.append((pre, ne, post))
        # Cells that the next iteration's `pre` conditions cannot tell apart are one
        # state: (which paths may follow, the pending condition) keeps the automaton small.
        groups: dict[frozenset[int], list[int]] = {}
        for b in range(len(self.cells)):
            sig = frozenset(k for k, (pre, _, _) in enumerate(parts) if b in pre)
            groups.setdefault(sig, []).append(b)
        lasts = [(sig, self.cell_ranges(frozenset(cells))) for sig, cells in groups.items()]
        nl = self.newline_cell
        nl_sig = next((sig for sig, cells in groups.items() if nl in cells), frozenset())
        states: dict[tuple[frozenset[int], Cond], int] = {}

        def state(sig: frozenset[int], post: Cond) -> int:
            return states.setdefault((sig, post), len(states))

        # the first iteration: its own `pre` faces the outside; it ends in a state
        entries: list[tuple[Cond, Node, int]] = []
        for pre, ne, post in parts:
            for sig, ranges in lasts:
                opening = self.restrict.last(ne, ranges)
                if opening is not None:
                    entries.append((pre, opening, state(sig, post)))
        moves: dict[tuple[int, int], list[Node]] = {}
        done = 0
        while done < len(states):  # states found while moving are explored in turn
            (allowed, post), s = next((k, v) for k, v in states.items() if v == done)
            done += 1
            for k, (_, ne2, post2) in enumerate(parts):
                if k not in allowed:
                    continue
                first = self.restrict.first(ne2, self.cell_ranges(post))
                for sig, ranges in lasts:
                    step = self.restrict.last(first, ranges) if first is not None else None
                    if step is not None:
                        moves.setdefault((s, state(sig, post2)), []).append(step)
                end_post = self.meet_post(post2, frozenset([EDGE]))
                if NLZ in post and nl is not None and nl not in post and end_post:
                    last_step = seq(self.restrict.exact_newline(ne2), Zero("\\z"))
                    if last_step is not None:
                        moves.setdefault((s, state(nl_sig, end_post)), []).append(last_step)
        walks = _kleene(len(states), {k: alt(v) for k, v in moves.items()})
        posts = {v: post for (_, post), v in states.items()}
        out: list[Path] = [(self.pre_all, EMPTY, self.post_all)]
        for pre, opening, s in entries:
            for t in range(len(states)):
                tail = alt([EMPTY if s == t else None, walks.get((s, t))])
                whole = seq(opening, tail)
                if whole is not None:
                    out.append((pre, whole, posts[t]))
        merged = _merge(out)
        self.check_size(merged)
        return merged

    def check_size(self, paths: list[Path]) -> None:
        """Refuse a rewrite that has outgrown `MAX_REWRITE_UNITS` (see there)."""
        if sum(self.size(core) for _, core, _ in paths) > MAX_REWRITE_UNITS:
            raise Unsupported(
                "the pattern is too large once its \\b, \\B or $ are rewritten for the "
                f"linear-time engine (over {MAX_REWRITE_UNITS:,} units); use fewer of them "
                "next to parts that may match nothing, such as \\w* or \\s*"
            )

    def size(self, node: Node) -> int:
        """The size of `node` written out (shared subtrees counted each time they appear)."""
        got = self._sizes.get(id(node))
        if got is not None:
            return got[1]
        if isinstance(node, Leaf):
            n = max(len(node.ranges), 1)
        elif isinstance(node, Seq):
            n = 1 + sum(self.size(c) for c in node.items)
        elif isinstance(node, Alt):
            n = 1 + sum(self.size(c) for c in node.branches)
        elif isinstance(node, Rep):
            n = 1 + self.size(node.body)
        else:
            n = 1
        self._sizes[id(node)] = (node, n)
        return n

    def concat(self, left: list[Path], right: list[Path]) -> list[Path]:
        out: list[Path] = []
        for t1 in left:
            for t2 in right:
                out.extend(self.join(t1, t2))
        return _merge(out)

    def join(self, t1: Path, t2: Path) -> list[Path]:
        pre1, c1, post1 = t1
        pre2, c2, post2 = t2
        r = self.restrict
        eps1, eps2 = r.eps(c1), r.eps(c2)
        # the last character of c1 must satisfy pre2; the first of c2 must satisfy post1
        last1 = r.last(c1, self.cell_ranges(pre2))
        first2 = r.first(c2, self.cell_ranges(post1))
        to_end: Node | None = None
        end_post = self.meet_post(post2, frozenset([EDGE]))
        nl = self.newline_cell
        if NLZ in post1 and (nl is None or nl not in post1) and end_post:
            # Python's `$` before a final newline: c2 must be exactly that newline.
            to_end = seq(r.exact_newline(c2), Zero("\\z"))
        pre_both = pre1 & pre2
        post_both = self.meet_post(post1, post2)
        candidates: list[tuple[Cond, Node | None, Cond]] = [
            (pre1, seq(last1, first2), post2),
            (pre1, seq(last1, to_end), end_post),
            (pre_both, seq(eps1, first2), post2),
            (pre_both, seq(eps1, to_end), end_post),
            (pre1, seq(last1, eps2), post_both),
            (pre_both, seq(eps1, eps2), post_both),
        ]
        return [(a, core, b) for a, core, b in candidates if core is not None and a and b]

    def pattern(self, node: Node) -> str:
        """The whole pattern as one RE2 pattern, its end conditions checked by consuming."""
        branches = []
        for pre, core, post in self.paths(node):
            branches.append(seq(self.before(pre), core, self.after(post)))
        return emit(alt(branches))

    def before(self, pre: Cond) -> Node | None:
        if pre >= self.pre_all:
            return EMPTY
        parts: list[Node | None] = [Zero("\\A") if EDGE in pre else None]
        ranges = self.cell_ranges(pre)
        parts.append(Leaf(ranges) if ranges else None)
        return alt(parts)

    def after(self, post: Cond) -> Node | None:
        if post >= self.post_all - {NLZ}:
            return EMPTY
        parts: list[Node | None] = [Zero("\\z") if EDGE in post else None]
        ranges = self.cell_ranges(post)
        parts.append(Leaf(ranges) if ranges else None)
        if NLZ in post and (self.newline_cell is None or self.newline_cell not in post):
            parts.append(Seq((Leaf(((10, 10),)), Zero("\\z"))))
        return alt(parts)


def _merge(paths: list[Path]) -> list[Path]:
    """Paths with the same end conditions become one path over an alternation."""
    grouped: dict[tuple[Cond, Cond], list[Node]] = {}
    for pre, core, post in paths:
        grouped.setdefault((pre, post), []).append(core)
    out: list[Path] = []
    for (pre, post), cores in grouped.items():
        merged = alt(cores)
        assert merged is not None
        out.append((pre, merged, post))
    return out


def _kleene(n: int, moves: dict[tuple[int, int], Node | None]) -> dict[tuple[int, int], Node]:
    """Walks of one or more moves between states `i` and `j`, as trees (Kleene's algorithm)."""
    r: dict[tuple[int, int], Node] = {k: v for k, v in moves.items() if v is not None}
    for k in range(n):
        loop = r.get((k, k))
        around: Node = Rep(loop, 0, None) if loop is not None else EMPTY
        nxt = dict(r)
        for i in range(n):
            into = r.get((i, k))
            if into is None:
                continue
            for j in range(n):
                out = r.get((k, j))
                if out is None:
                    continue
                via = seq(into, around, out)
                merged = alt([r.get((i, j)), via])
                if merged is not None:
                    nxt[(i, j)] = merged
        r = nxt
    return r


def _unroll(node: Rep) -> Node:
    assert node.hi is not None
    if node.hi > MAX_UNROLL:
        raise Unsupported(
            f"a group holding \\b, \\B or $ is repeated more than {MAX_UNROLL} times; the "
            f"linear-time engine writes such a group out at most {MAX_UNROLL} times ({{0,8}}, "
            "or use * or +)"
        )
    tail: Node = EMPTY
    for _ in range(node.hi - node.lo):
        tail = Alt((EMPTY, Seq((node.body, tail))))
    return Seq((*([node.body] * node.lo), tail))


def _is_word_cell(cell: Ranges, ascii: bool) -> bool:
    lo = cell[0][0]
    if ascii:
        return chr(lo).isascii() and (chr(lo).isalnum() or lo == 0x5F)
    return chr(lo).isalnum() or lo == 0x5F


def make_cells(dividers: Sequence[Ranges]) -> list[Ranges]:
    """The code points split by every divider (each cell is inside or outside each one)."""
    cells = [ALL]
    for divider in dividers:
        outside = complement(divider)
        nxt: list[Ranges] = []
        for cell in cells:
            nxt.extend(c for c in (intersect(cell, divider), intersect(cell, outside)) if c)
        cells = nxt
    return cells


def rewrite(tree: Node) -> str:
    """The RE2 pattern that answers `search` as Python would for a tree with assertions."""
    kinds = assert_kinds(tree)
    dividers: list[Ranges] = []
    if ("b", False) in kinds or ("B", False) in kinds:
        dividers.append(unicode_ranges("w"))
    if ("b", True) in kinds or ("B", True) in kinds:
        dividers.append(ASCII_WORD)
    newline = ((10, 10),)
    if ("$", False) in kinds or ("$", True) in kinds:
        dividers.append(newline)
    cells = make_cells(dividers)
    nl_cell = next((k for k, c in enumerate(cells) if c == newline), None)
    return _Rewriter(cells, nl_cell).pattern(tree)
