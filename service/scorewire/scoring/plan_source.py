"""A request's checks as plain data (`PlanSource`), and the key a compiled plan is kept by.

Compiled plans hold RE2 objects and closures that cannot be pickled, so what travels to
a scoring worker is the plan's *source* (suite YAML, serialized check specs, compact
lines) and the key derived from it; every process compiles a source once and keeps the
plan by key. `SourceMemo` spares a caller who sends the same checks with every request
the cost of building and hashing its source again.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(slots=True, frozen=True)
class PlanSource:
    """What a request, a caller in process or a suite file says about its checks.

    A request's source is plain picklable data (what a scoring worker is sent); the
    in-process forms (`specs`, `document`) never leave the process.
    """

    suite_yaml: str = ""
    suite_name: str = ""
    """The suite of a YAML document to run (a document may hold several)."""
    checks: tuple[bytes, ...] = ()
    """Serialized `CheckSpec` messages."""
    compact: tuple[str, ...] = ()
    gate: bytes | None = None
    """A serialized `Gate` message, or None when the request has none."""
    max_checks: int | None = None
    format: str = ""
    """`checkllm`, `evalstone`, or empty to detect it from the document's keys."""
    specs: tuple[Any, ...] | None = None
    """In process: checks as `CheckSpec`s or YAML-style mappings (None: a request's)."""
    document: Any = None
    """In process: a suite file's parsed YAML, its imports allowed."""
    base_dir: str | None = None
    """Where a suite file's datasets are read from."""

    @classmethod
    def of_checks(cls, checks: Sequence[Any], compact: Sequence[str] = ()) -> PlanSource:
        """Checks given in process (`CheckSpec`s or YAML-style mappings) and compact lines."""
        return cls(compact=tuple(compact), specs=tuple(checks))

    @classmethod
    def of_file(cls, document: Any, base_dir: str | None, suite_name: str = "") -> PlanSource:
        """A suite file's parsed document (either format); `suite_name` picks an
        evalstone suite."""
        return cls(suite_name=suite_name, document=document, base_dir=base_dir)


def source_bytes(src: PlanSource) -> int:
    """How many bytes a plan's source takes (what the plan cache's estimate starts from)."""
    text = len(src.suite_yaml) + len(src.suite_name) + sum(len(c) for c in src.compact)
    text += len(src.format)
    return text + sum(len(c) for c in src.checks) + len(src.gate or b"")


def plan_key(source: PlanSource) -> bytes:
    """The key a request's compiled plan is kept by: a digest of its source (equal
    sources, equal keys; the in-process forms are never kept by key)."""
    h = hashlib.blake2b(digest_size=20)
    for part in (
        source.format,
        source.suite_yaml,
        "\0",
        source.suite_name,
        "\0",
        "\n".join(source.compact),
    ):
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    for c in source.checks:
        h.update(c)
        h.update(b"\1")
    if source.gate is not None:
        h.update(source.gate)
    return h.digest()


SOURCE_MEMO_SIZE = 256
"""Recent plan sources remembered with their key: a request repeating the checks of one
of them (every Score of a caller scoring with fixed checks) skips building and hashing
its source again."""


SOURCE_MEMO_MAX_BYTES = 16 * 1024
"""Only sources up to this size (characters of text plus bytes of serialized specs) are
remembered, so the memo holds at most 256 such sources; bigger ones would cost more to
hash for the lookup than the lookup saves."""


class SourceMemo:
    """An LRU of (cache key, PlanSource) by the exact serialized parts of a request's plan.

    Keyed by the parts themselves, not a digest of them: equal parts are the same plan,
    so a hit can never be another plan's key."""

    def __init__(self, size: int = SOURCE_MEMO_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[Any, tuple[bytes, PlanSource]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def get(
        self,
        suite_yaml: str,
        suite_name: str,
        checks: tuple[bytes, ...],
        compact: tuple[str, ...],
        gate: bytes | None,
        max_checks: int,
        suite_format: str,
    ) -> tuple[bytes, PlanSource]:
        """The key and source of these parts, built (and remembered, if small) on a miss."""
        size = len(suite_yaml) + len(suite_name) + sum(map(len, checks))
        size += sum(map(len, compact)) + len(gate or b"")
        parts = None
        if size <= SOURCE_MEMO_MAX_BYTES:
            parts = (suite_format, suite_yaml, suite_name, checks, compact, gate, max_checks)
            hit = self._items.get(parts)
            if hit is not None:
                self._items.move_to_end(parts)
                return hit
        source = PlanSource(
            suite_yaml=suite_yaml,
            suite_name=suite_name,
            checks=checks,
            compact=compact,
            gate=gate,
            max_checks=max_checks,
            format=suite_format,
        )
        entry = (plan_key(source), source)
        if parts is not None:
            self._items[parts] = entry
            if len(self._items) > self._size:
                self._items.popitem(last=False)
        return entry
