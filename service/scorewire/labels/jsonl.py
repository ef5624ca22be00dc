"""Labels as JSON Lines: what `scorewire label` writes and the `human` check reads.

One label per line, an object with these keys:

    {"sample_id": "q1", "output_hash": "<64 hex>", "passed": true, "note": "",
     "labeller": "ana", "time": "2025-05-01T12:00:00.000001+00:00", "check": "default"}

`sample_id`, `output_hash` and `passed` are required; `labeller`, `note` default to "",
`check` to `default`, and a label without `time` loses to any timed label of the same
labeller. Lines are history: a later line never erases an earlier one, and the latest
label per (sample_id, output_hash, check, labeller) counts. Blank lines are ignored; any
other line that is not a label makes the whole file unreadable (an error, never a pass).
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from scorewire.labels.label_model import (
    DEFAULT_CHECK,
    Label,
    is_output_hash,
    latest_per_labeller,
)

_NO_TIME = datetime.min.replace(tzinfo=UTC)


class LabelFileError(Exception):
    """A labels file that cannot be read: missing, unreadable, or with a bad line."""


def label_to_json(label: Label) -> dict[str, Any]:
    """The JSONL object of a label."""
    return {
        "sample_id": label.sample_id,
        "output_hash": label.output_hash,
        "passed": label.passed,
        "note": label.note,
        "labeller": label.labeller,
        "time": label.created_at.astimezone(UTC).isoformat(),
        "check": label.check,
    }


def label_line(label: Label) -> str:
    """One JSONL line (with its newline) for a label."""
    return json.dumps(label_to_json(label), ensure_ascii=False) + "\n"


def _text(obj: dict[str, Any], key: str, default: str | None) -> str:
    value = obj.get(key, default)
    if value is None:
        raise ValueError(f"{key!r} is required")
    if not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string")
    return value


def label_from_json(obj: Any) -> Label:
    """Parse one JSONL object; ValueError says what is wrong with it."""
    if not isinstance(obj, dict):
        raise ValueError("a label must be a JSON object")
    sample_id = _text(obj, "sample_id", None)
    if not sample_id:
        raise ValueError("'sample_id' must not be empty")
    digest = _text(obj, "output_hash", None)
    if not is_output_hash(digest):
        raise ValueError("'output_hash' must be 64 lowercase hex digits (SHA-256)")
    passed = obj.get("passed")
    if not isinstance(passed, bool):
        raise ValueError("'passed' must be true or false")
    raw_time = obj.get("time")
    if raw_time is None:
        created_at = _NO_TIME
    elif isinstance(raw_time, str):
        try:
            created_at = datetime.fromisoformat(raw_time)
        except ValueError:
            raise ValueError(f"'time' is not an ISO-8601 time: {raw_time!r}") from None
        if created_at.tzinfo is None:
            created_at = created_at.replace(tzinfo=UTC)
    else:
        raise ValueError("'time' must be an ISO-8601 string")
    return Label(
        sample_id=sample_id,
        output_hash=digest,
        passed=passed,
        labeller=_text(obj, "labeller", ""),
        created_at=created_at,
        check=_text(obj, "check", DEFAULT_CHECK) or DEFAULT_CHECK,
        note=_text(obj, "note", ""),
    )


def parse_lines(lines: Iterable[str], source: str) -> list[Label]:
    """Every label of a JSONL text, in file order; LabelFileError names the bad line."""
    labels = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            labels.append(label_from_json(json.loads(line)))
        except ValueError as err:  # json.JSONDecodeError is a ValueError
            raise LabelFileError(f"{source} line {number}: {err}") from None
    return labels


def read_labels(path: str) -> list[Label]:
    """Every label of a JSONL file, in file order."""
    try:
        with open(path, encoding="utf-8") as f:
            return parse_lines(f, path)
    except OSError as err:
        raise LabelFileError(f"cannot read labels file {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise LabelFileError(f"labels file {path} is not UTF-8") from None


@dataclass(slots=True)
class LabelIndex:
    """The counting labels of a labels file, keyed by (sample_id, output_hash, check)."""

    counting: dict[tuple[str, str, str], list[Label]] = field(default_factory=dict)

    @classmethod
    def build(cls, labels: Iterable[Label]) -> LabelIndex:
        """Index labels given in file order."""
        grouped: dict[tuple[str, str, str], list[Label]] = {}
        for label in labels:
            grouped.setdefault((label.sample_id, label.output_hash, label.check), []).append(label)
        return cls({key: latest_per_labeller(group) for key, group in grouped.items()})

    def lookup(self, sample_id: str, output_hash: str, check: str) -> list[Label]:
        """The counting label of each labeller for this sample, output and check."""
        return self.counting.get((sample_id, output_hash, check), [])


class LabelFileCache:
    """Labels files read once and re-read only when they change (path, mtime, size, inode).

    A `stat` per lookup is the price of noticing a file that `scorewire label` is still
    appending to; it costs about a microsecond.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[tuple[int, int, int], LabelIndex]] = {}

    def get(self, path: str) -> LabelIndex:
        """The index of the file at `path`; LabelFileError when it cannot be read."""
        try:
            st = os.stat(path)
        except OSError as err:
            raise LabelFileError(f"cannot read labels file {path}: {err.strerror}") from None
        stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
        with self._lock:
            hit = self._entries.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        index = LabelIndex.build(read_labels(path))
        with self._lock:
            self._entries[path] = (stamp, index)
        return index

    def clear(self) -> None:
        """Forget every file (tests)."""
        with self._lock:
            self._entries.clear()


FILE_CACHE = LabelFileCache()
"""The process's cache of labels files."""
