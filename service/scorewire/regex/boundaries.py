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
  first character of the other (`_last`, `_first`); what is left at the ends of the whole
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

import functools
import importlib
import re
from collections.abc import Callable, Iterable, Sequence

Ranges = tuple[tuple[int, int], ...]

_MAX_CP = 0x10FFFF
ALL: Ranges = ((0, _MAX_CP),)
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


# --- code-point sets ---------------------------------------------------------------------


def _union(*sets: Ranges) -> Ranges:
    merged: list[list[int]] = []
    for lo, hi in sorted(r for s in sets for r in s):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return tuple((lo, hi) for lo, hi in merged)


def complement(ranges: Ranges) -> Ranges:
    """All code points not in `ranges` (which must be sorted and disjoint)."""
    out: list[tuple[int, int]] = []
    nxt = 0
    for lo, hi in ranges:
        if lo > nxt:
            out.append((nxt, lo - 1))
        nxt = hi + 1
    if nxt <= _MAX_CP:
        out.append((nxt, _MAX_CP))
    return tuple(out)


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    out: list[tuple[int, int]] = []
    i = j = 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return tuple(out)


def normalize(ranges: Iterable[tuple[int, int]]) -> Ranges:
    """Sorted, disjoint, merged ranges."""
    return _union(tuple(ranges))


@functools.cache
def cased_code_points() -> Ranges:
    """Code points whose membership in a class can change under Python's IGNORECASE.

    Python folds a character through its simple lower/upper case and a small table of
    extra equivalences (`re._casefix`); a character with neither is matched only by
    itself. Computed once (about 0.1 s) from this Python's own tables.
    """
    # Private modules of this Python's `re`, read (not patched) so the sets are its own.
    sre = importlib.import_module("_sre")
    casefix = importlib.import_module("re._casefix")
    points = {cp for cp in range(_MAX_CP + 1) if sre.unicode_iscased(cp)}
    for key, others in casefix._EXTRA_CASES.items():
        points.add(key)
        points.update(others)
    return normalize((cp, cp) for cp in points)


@functools.lru_cache(maxsize=1024)
def fold_exactly(base: Ranges, python_text: str, python_flags: int) -> Ranges:
    """The exact set one case-insensitive character matcher accepts, as Python decides.

    `base` is what the matcher accepts without case folding. Only the cased code points
    can differ; for each of them Python's own `re` answers on the one-character matcher
    (a literal or a class, which cannot backtrack), so the set is Python's by construction.
    About 1-3 ms a matcher; memoised, as the same letters recur in a pattern.
    """
    rx = re.compile(python_text, python_flags)
    cased = cased_code_points()
    hits = tuple((cp, cp) for lo, hi in cased for cp in range(lo, hi + 1) if rx.fullmatch(chr(cp)))
    return _union(_intersect(base, complement(cased)), hits)


# --- the tree ----------------------------------------------------------------------------


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


def _has_assert(node: Node) -> bool:
    if isinstance(node, Assert):
        return True
    if isinstance(node, Seq):
        return any(_has_assert(n) for n in node.items)
    if isinstance(node, Alt):
        return any(_has_assert(n) for n in node.branches)
    if isinstance(node, Rep):
        return _has_assert(node.body)
    return False


def _seq(*items: Node | None) -> Node | None:
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


def _alt(branches: Iterable[Node | None]) -> Node | None:
    kept = [b for b in branches if b is not None]
    if not kept:
        return None
    return kept[0] if len(kept) == 1 else Alt(kept)


# --- restricting an assertion-free tree --------------------------------------------------


class _Restrict:
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
            return _seq(*(self.eps(n) for n in node.items))
        if isinstance(node, Alt):
            return _alt(self.eps(n) for n in node.branches)
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
        inside = _intersect(chars, cell)
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
                ranges = _union(*(self.chars(n) for n in node.items))
            elif isinstance(node, Alt):
                ranges = _union(*(self.chars(n) for n in node.branches))
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
            got = _intersect(node.ranges, cell)
            return Leaf(got) if got else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return _alt(self.first(n, cell) for n in node.branches)
        if isinstance(node, Seq):
            options: list[Node | None] = []
            before: list[Node | None] = []
            for k, item in enumerate(node.items):
                options.append(_seq(*before, self.first(item, cell), *node.items[k + 1 :]))
                empty = self.eps(item)
                if empty is None:
                    break
                before.append(empty)
            return _alt(options)
        assert isinstance(node, Rep)
        first = self.first(node.body, cell)
        return _alt(
            [_seq(first, self._rest(node)), _seq(self._skipped(node), first, self._tail(node))]
        )

    def last(self, node: Node, cell: Ranges) -> Node | None:
        """The non-empty strings of `node` whose last character is in `cell`."""
        return self._cached("l", node, cell, lambda: self._whole(node, cell, self._last))

    def _last(self, node: Node, cell: Ranges) -> Node | None:
        if isinstance(node, Leaf):
            got = _intersect(node.ranges, cell)
            return Leaf(got) if got else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return _alt(self.last(n, cell) for n in node.branches)
        if isinstance(node, Seq):
            options: list[Node | None] = []
            after: list[Node | None] = []
            for k in range(len(node.items) - 1, -1, -1):
                item = node.items[k]
                options.append(_seq(*node.items[:k], self.last(item, cell), *after))
                empty = self.eps(item)
                if empty is None:
                    break
                after.insert(0, empty)
            return _alt(options)
        assert isinstance(node, Rep)
        last = self.last(node.body, cell)
        return _alt(
            [_seq(self._rest(node), last), _seq(self._tail(node), last, self._skipped(node))]
        )

    def exact_newline(self, node: Node) -> Node | None:
        """The paths of `node` that consume exactly one newline and nothing else."""
        return self._cached("n", node, ALL, lambda: self._exact_newline(node))

    def _exact_newline(self, node: Node) -> Node | None:
        if isinstance(node, Leaf):
            return Leaf(((10, 10),)) if _intersect(node.ranges, ((10, 10),)) else None
        if isinstance(node, Zero):
            return None
        if isinstance(node, Alt):
            return _alt(self.exact_newline(n) for n in node.branches)
        if isinstance(node, Seq):
            options = []
            for k, item in enumerate(node.items):
                around = (
                    [self.eps(n) for n in node.items[:k]],
                    [self.eps(n) for n in node.items[k + 1 :]],
                )
                options.append(_seq(*around[0], self.exact_newline(item), *around[1]))
            return _alt(options)
        assert isinstance(node, Rep)
        if node.hi == 0:
            return None
        newline = self.exact_newline(node.body)
        if node.lo <= 1:
            return newline
        # the other (at least one) iterations are empty, before or after the newline
        empty = self.eps(node.body)
        return _alt([_seq(empty, newline), _seq(newline, empty)])

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


# --- paths with conditions at both ends --------------------------------------------------

Cond = frozenset[object]
Path = tuple[Cond, Node, Cond]


class _Rewriter:
    """Rewrites a tree holding assertions into one assertion-free RE2 pattern."""

    def __init__(self, cells: list[Ranges], newline_cell: int | None, set_text: SetText) -> None:
        self.set_text = set_text
        self.cells = cells
        self.newline_cell = newline_cell
        self.pre_all: Cond = frozenset([EDGE, *range(len(cells))])
        self.post_all: Cond = self.pre_all | ({NLZ} if newline_cell is not None else set())
        self.restrict = _Restrict()
        self._cell_ranges: dict[Cond, Ranges] = {}
        self._sizes: dict[int, tuple[Node, int]] = {}

    def cell_ranges(self, cond: Cond) -> Ranges:
        """The code points of the cells in `cond` (memoised: the cells are large)."""
        got = self._cell_ranges.get(cond)
        if got is None:
            got = self._cell_ranges[cond] = _union(
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
        if not _has_assert(node):
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
                    last_step = _seq(self.restrict.exact_newline(ne2), Zero("\\z"))
                    if last_step is not None:
                        moves.setdefault((s, state(nl_sig, end_post)), []).append(last_step)
        walks = _kleene(len(states), {k: _alt(v) for k, v in moves.items()})
        posts = {v: post for (_, post), v in states.items()}
        out: list[Path] = [(self.pre_all, EMPTY, self.post_all)]
        for pre, opening, s in entries:
            for t in range(len(states)):
                tail = _alt([EMPTY if s == t else None, walks.get((s, t))])
                whole = _seq(opening, tail)
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
            to_end = _seq(r.exact_newline(c2), Zero("\\z"))
        pre_both = pre1 & pre2
        post_both = self.meet_post(post1, post2)
        candidates: list[tuple[Cond, Node | None, Cond]] = [
            (pre1, _seq(last1, first2), post2),
            (pre1, _seq(last1, to_end), end_post),
            (pre_both, _seq(eps1, first2), post2),
            (pre_both, _seq(eps1, to_end), end_post),
            (pre1, _seq(last1, eps2), post_both),
            (pre_both, _seq(eps1, eps2), post_both),
        ]
        return [(a, core, b) for a, core, b in candidates if core is not None and a and b]

    def pattern(self, node: Node) -> str:
        """The whole pattern as one RE2 pattern, its end conditions checked by consuming."""
        branches = []
        for pre, core, post in self.paths(node):
            branches.append(_seq(self.before(pre), core, self.after(post)))
        return emit(_alt(branches), self.set_text)

    def before(self, pre: Cond) -> Node | None:
        if pre >= self.pre_all:
            return EMPTY
        parts: list[Node | None] = [Zero("\\A") if EDGE in pre else None]
        ranges = self.cell_ranges(pre)
        parts.append(Leaf(ranges) if ranges else None)
        return _alt(parts)

    def after(self, post: Cond) -> Node | None:
        if post >= self.post_all - {NLZ}:
            return EMPTY
        parts: list[Node | None] = [Zero("\\z") if EDGE in post else None]
        ranges = self.cell_ranges(post)
        parts.append(Leaf(ranges) if ranges else None)
        if NLZ in post and (self.newline_cell is None or self.newline_cell not in post):
            parts.append(Seq((Leaf(((10, 10),)), Zero("\\z"))))
        return _alt(parts)


def _merge(paths: list[Path]) -> list[Path]:
    """Paths with the same end conditions become one path over an alternation."""
    grouped: dict[tuple[Cond, Cond], list[Node]] = {}
    for pre, core, post in paths:
        grouped.setdefault((pre, post), []).append(core)
    out: list[Path] = []
    for (pre, post), cores in grouped.items():
        merged = _alt(cores)
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
                via = _seq(into, around, out)
                merged = _alt([r.get((i, j)), via])
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
            nxt.extend(c for c in (_intersect(cell, divider), _intersect(cell, outside)) if c)
        cells = nxt
    return cells


def rewrite(tree: Node, unicode_word: Ranges, ascii_word: Ranges, set_text: SetText) -> str:
    """The RE2 pattern that answers `search` as Python would for a tree with assertions."""
    kinds = _assert_kinds(tree)
    dividers: list[Ranges] = []
    if ("b", False) in kinds or ("B", False) in kinds:
        dividers.append(unicode_word)
    if ("b", True) in kinds or ("B", True) in kinds:
        dividers.append(ascii_word)
    newline = ((10, 10),)
    if ("$", False) in kinds or ("$", True) in kinds:
        dividers.append(newline)
    cells = make_cells(dividers)
    nl_cell = next((k for k, c in enumerate(cells) if c == newline), None)
    return _Rewriter(cells, nl_cell, set_text).pattern(tree)


def _assert_kinds(node: Node) -> set[tuple[str, bool]]:
    if isinstance(node, Assert):
        return {(node.kind, node.ascii)}
    children: Iterable[Node] = ()
    if isinstance(node, Seq):
        children = node.items
    elif isinstance(node, Alt):
        children = node.branches
    elif isinstance(node, Rep):
        children = (node.body,)
    return set().union(*(_assert_kinds(c) for c in children)) if children else set()


# --- writing RE2 -------------------------------------------------------------------------

SetText = Callable[[Ranges], str]
NOTHING = "[^\\x00-\\x{10FFFF}]"
"""RE2 text that matches no character."""


def emit(node: Node | None, set_text: SetText) -> str:
    """RE2 text for an assertion-free tree, independent of flags (no (?i), (?m), (?s)).

    `set_text` writes a code-point set as RE2 text (the engine's writer, which knows
    RE2's pitfalls with case pairs).
    """
    if node is None:
        return NOTHING
    if isinstance(node, Leaf):
        return set_text(node.ranges) if node.ranges else NOTHING
    if isinstance(node, Zero):
        return node.text
    if isinstance(node, Seq):
        return "".join(
            f"(?:{emit(n, set_text)})" if isinstance(n, Alt) else emit(n, set_text)
            for n in node.items
        )
    if isinstance(node, Alt):
        return "(?:" + "|".join(emit(b, set_text) for b in node.branches) + ")"
    assert isinstance(node, Rep)
    body = emit(node.body, set_text)
    if node.hi is None:
        count = {0: "*", 1: "+"}.get(node.lo, f"{{{node.lo},}}")
    elif node.lo == node.hi:
        count = f"{{{node.lo}}}"
    else:
        count = f"{{{node.lo},{node.hi}}}"
    return f"(?:{body}){count}"
