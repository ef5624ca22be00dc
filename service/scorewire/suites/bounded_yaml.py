"""YAML from callers, loaded with limits: nesting depth, alias expansion, no cycles.

PyYAML's safe loader is safe from code execution, not from cost:

- Aliases share nodes, so a "billion laughs" document of a few hundred bytes loads in
  milliseconds and then explodes when anything walks it (validating, printing, hashing):
  in nodes, or in bytes (a 10 kB document aliasing one 4 kB string a million times is
  4 GB once written out).
- An alias inside its own anchor (`&a [*a]`) builds a cyclic structure that no walker
  finishes.
- Deep nesting (`[[[[...`, or aliases nesting one collection in another) outlasts
  whatever walks the data recursively afterwards.
- Scalar constructors raise plain `ValueError` (`2001-13-45`, a 5,000-digit integer), and
  sexagesimal integers (`59:59:59:...`) grow past what `float()` and `str()` accept.

`load` turns each of these into a `yaml.MarkedYAMLError` with the line and column of the
offending node, so callers report it like any other YAML syntax error; an expansion past
a limit is its subclass `ExpansionTooLarge`, since the document is too big, not wrong.
"""

from __future__ import annotations

from typing import Any

import yaml
from scorewire.settings import Settings
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 100
"""Deepest nesting of collections (protobuf's own limit for messages is the same)."""
MAX_EXPANDED_NODES: int = Settings.model_fields["max_suite_expanded_nodes"].default
"""Most nodes a document may have once its aliases are expanded, when it uses aliases."""
MAX_EXPANDED_BYTES: int = Settings.model_fields["max_suite_expanded_bytes"].default
"""Most bytes (counted as compact JSON) a document may expand to through its aliases."""
MAX_INT_BITS = 1000
"""Largest integer magnitude (about 300 digits): beyond it `float()` and `str()` fail."""


class _Constructing:
    """The safe constructor's value errors as YAML errors at the value's place."""

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep)  # type: ignore[misc]
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, OverflowError) as err:
            raise ConstructorError(
                None, None, f"cannot read this value: {str(err)[:200]}", node.start_mark
            ) from None
        if type(value) is int and value.bit_length() > MAX_INT_BITS:
            raise ConstructorError(
                None, None, "the integer is too large (about 300 digits at most)", node.start_mark
            )
        return value


class _PythonLoader(_Constructing, yaml.SafeLoader):
    """PyYAML's own parser in Python, for a PyYAML built without libyaml. Its composer
    recurses once per level, so it stops past MAX_DEPTH while composing, before
    `_check_graph` would."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Node | None, index: int) -> Node | None:
        if self._depth >= MAX_DEPTH:
            mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
            raise ComposerError(
                None, None, f"the document nests more than {MAX_DEPTH} levels deep", mark
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_LOADERS: dict[str, type[Any]] = {"python": _PythonLoader}
if hasattr(yaml, "CSafeLoader"):

    class _LibyamlLoader(_Constructing, yaml.CSafeLoader):
        """libyaml's parser (about four times PyYAML's own in Python). libyaml refuses
        nesting past 1,000 levels itself; `_check_graph` holds documents to MAX_DEPTH."""

    _LOADERS["libyaml"] = _LibyamlLoader

LOADER = "libyaml" if "libyaml" in _LOADERS else "python"
"""The parser `load` uses: libyaml's when PyYAML was built with it (its wheels are),
else PyYAML's own. Both load the same documents to the same values and refuse the same
ones (`tests/suites/test_bounded_yaml.py` runs its cases on each)."""


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _scalar_bytes(node: Node) -> int:
    """A scalar's cost: its text in UTF-8 and two bytes (the quotes it takes in JSON)."""
    text = node.value
    return (len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))) + 2


class ExpansionTooLarge(yaml.MarkedYAMLError):
    """The document's aliases expand it past a limit: a document too big, not bad YAML."""

    def __init__(self, what: str, limit: int, mark: Any) -> None:
        super().__init__(
            None, None, f"aliases expand the document to more than {limit:,} {what}", mark
        )
        self.what = what
        """`nodes` or `bytes`: which limit was passed."""
        self.limit = limit


def _check_graph(root: Node, max_nodes: int, max_bytes: int) -> None:
    """Refuse cycles, nesting deeper than MAX_DEPTH (as written, or once aliases are
    expanded), and alias expansion beyond `max_nodes` nodes or `max_bytes` bytes.

    Walks each distinct node once (iteratively), giving it its size once expanded: its
    nodes, and its bytes counted as compact JSON counts them (a scalar its UTF-8 and two
    quotes, a collection its brackets and one separator per entry). Sizes are capped
    just past the limits, so no count grows into a huge integer. A limit binds only when
    aliases make the expansion bigger than the document itself, which the document's
    own size limit bounds.
    """
    nodes: dict[int, int] = {}
    size: dict[int, int] = {}
    height: dict[int, int] = {}  # levels below and including a node, aliases expanded
    own_nodes = own_bytes = 0  # the document without its aliases expanded
    first_over: dict[str, Node] = {}
    entered: set[int] = set()
    stack: list[tuple[Node, bool, int]] = [(root, False, 0)]
    while stack:
        node, leaving, depth = stack.pop()
        key = id(node)
        if leaving:
            kids = _children(node)
            count = 1 + sum(nodes[id(c)] for c in kids)
            total = 2 + len(kids) + sum(size[id(c)] for c in kids)
            levels = 1 + max((height[id(c)] for c in kids), default=0)
            if levels > MAX_DEPTH:
                # Nested as written, the walk refused it on the way in: aliases did it.
                raise ComposerError(
                    None, None, f"aliases nest the document more than {MAX_DEPTH} levels deep",
                    node.start_mark,
                )  # fmt: skip
            height[key] = levels
            own_nodes, own_bytes = own_nodes + 1, own_bytes + 2 + len(kids)
        elif key in size:
            continue
        elif depth >= MAX_DEPTH:
            raise ComposerError(
                None, None, f"the document nests more than {MAX_DEPTH} levels deep",
                node.start_mark,
            )  # fmt: skip
        elif isinstance(node, ScalarNode):
            count, total = 1, _scalar_bytes(node)
            height[key] = 1
            own_nodes, own_bytes = own_nodes + 1, own_bytes + total
        elif key in entered:
            # Entered but not left: the node is its own ancestor.
            raise ComposerError(
                None, None, "an alias refers to a collection that contains it", node.start_mark
            )
        else:
            entered.add(key)
            stack.append((node, True, depth))
            stack.extend((c, False, depth + 1) for c in _children(node) if id(c) not in size)
            continue
        # The first node past a limit holds no node past it: the place to point at.
        if count > max_nodes:
            first_over.setdefault("nodes", node)
        if total > max_bytes:
            first_over.setdefault("bytes", node)
        nodes[key] = min(count, max_nodes + 1)
        size[key] = min(total, max_bytes + 1)
    if nodes[id(root)] > max_nodes and nodes[id(root)] > own_nodes:
        raise ExpansionTooLarge("nodes", max_nodes, first_over["nodes"].start_mark)
    if size[id(root)] > max_bytes and size[id(root)] > own_bytes:
        raise ExpansionTooLarge("bytes", max_bytes, first_over["bytes"].start_mark)


def load(
    text: str,
    *,
    max_nodes: int = MAX_EXPANDED_NODES,
    max_bytes: int = MAX_EXPANDED_BYTES,
    parser: str = "",
) -> Any:
    """Parse one YAML document from an untrusted caller, within the limits above.

    `max_nodes` and `max_bytes` bound what its aliases expand it to (the defaults are
    the server's, `Settings.max_suite_expanded_nodes` and `max_suite_expanded_bytes`);
    past one, `ExpansionTooLarge` says which, before any value is built. `parser`: a key
    of `_LOADERS` (empty: `LOADER`).
    """
    loader = _LOADERS[parser or LOADER](text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node, max_nodes, max_bytes)
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as err:
        if err.problem and "maximum nesting depth" in err.problem:  # libyaml's own limit
            raise ComposerError(
                None, None, f"the document nests more than {MAX_DEPTH} levels deep",
                err.problem_mark,
            ) from None  # fmt: skip
        raise
    finally:
        loader.dispose()
