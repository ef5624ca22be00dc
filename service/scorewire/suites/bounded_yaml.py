"""YAML from callers, loaded with limits: nesting depth, alias expansion, no cycles.

PyYAML's safe loader is safe from code execution, not from cost:

- Aliases share nodes, so a "billion laughs" document of a few hundred bytes loads in
  milliseconds and then explodes when anything walks it (validating, printing, hashing).
- An alias inside its own anchor (`&a [*a]`) builds a cyclic structure that no walker
  finishes.
- The composer recurses once per nesting level, so `[[[[...` ends in RecursionError.
- Scalar constructors raise plain `ValueError` (`2001-13-45`, a 5,000-digit integer), and
  sexagesimal integers (`59:59:59:...`) grow past what `float()` and `str()` accept.

`load` turns each of these into a `yaml.MarkedYAMLError` with the line and column of the
offending node, so callers report it like any other YAML syntax error.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

MAX_DEPTH = 100
"""Deepest nesting of collections (protobuf's own limit for messages is the same)."""
MAX_EXPANDED_NODES = 1_000_000
"""Most nodes a document may have once its aliases are expanded, when it uses aliases."""
MAX_INT_BITS = 1000
"""Largest integer magnitude (about 300 digits): beyond it `float()` and `str()` fail."""


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that refuses documents nested deeper than MAX_DEPTH while composing."""

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

    def construct_object(self, node: Any, deep: bool = False) -> Any:
        try:
            value = super().construct_object(node, deep)
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


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def _check_graph(root: Node) -> None:
    """Refuse cycles, and alias expansion beyond MAX_EXPANDED_NODES (iteratively)."""
    size: dict[int, int] = {}
    entered: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, leaving = stack.pop()
        key = id(node)
        if leaving:
            total = 1 + sum(size[id(c)] for c in _children(node))
            size[key] = min(total, MAX_EXPANDED_NODES + 1)  # capped: no huge integers
            continue
        if key in size:
            continue
        if key in entered:
            # Entered but not left: the node is its own ancestor.
            raise ComposerError(
                None, None, "an alias refers to a collection that contains it", node.start_mark
            )
        entered.add(key)
        stack.append((node, True))
        stack.extend((c, False) for c in _children(node) if id(c) not in size)
    if size[id(root)] > MAX_EXPANDED_NODES and size[id(root)] > len(size):
        raise ComposerError(
            None,
            None,
            f"aliases expand the document to more than {MAX_EXPANDED_NODES:,} nodes",
            root.start_mark,
        )


def load(text: str) -> Any:
    """Parse one YAML document from an untrusted caller, within the limits above."""
    loader = _BoundedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check_graph(node)
        return loader.construct_document(node)
    finally:
        loader.dispose()
