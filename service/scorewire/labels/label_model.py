"""Human labels: what a label is, how an output is identified, and what a set of labels means.

A label is one person's verdict on one exact output of one sample, for one label check,
in one tenant (the bearer token name whose outputs it judges; empty with auth off).
Labels are history: nothing is overwritten, and for each (tenant, sample_id, output_hash,
check, labeller) the label with the latest `created_at` counts (a tie goes to the one
stored last). The `human` check passes only when every labeller's counting label passed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

DEFAULT_CHECK = "default"
"""The label check of a label that names none, and of a `human` check without `check:`."""

MAX_SAMPLE_ID_BYTES = 1024
"""Longest sample id a label may carry, in UTF-8 bytes."""
MAX_NOTE_CHARS = 4096
"""Longest note a label may carry."""
MAX_NAME_CHARS = 256
"""Longest labeller or check name."""

_HEX = frozenset("0123456789abcdef")


def output_hash(text: str) -> str:
    """The identity of an output: SHA-256 of its text's UTF-8 bytes, 64 lowercase hex digits.

    The text is hashed exactly as scored: no trimming and no Unicode or newline
    normalization, so a label stays bound to the output a person actually saw. Lone
    surrogates (possible in JSON, never over gRPC) are encoded as by `surrogatepass`.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def labelled_text(text: str, value: Any = None) -> str:
    """The text a label is bound to: the output text, or its JSON value when text is empty.

    A structured output with no text is identified by its value as compact JSON with
    sorted keys (`{"a":1}`), so the labeller and the `human` check agree on it.
    """
    if text or value is None:
        return text
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def is_output_hash(value: str) -> bool:
    """Whether `value` has the form of `output_hash`'s result."""
    return len(value) == 64 and _HEX.issuperset(value)


def utc_now() -> datetime:
    """The current time, timezone-aware UTC, kept to the microsecond."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class Label:
    """One person's verdict on one exact output of one sample."""

    sample_id: str
    """The sample's id."""
    output_hash: str
    """`output_hash(output text)` of the output that was judged."""
    passed: bool
    """Whether the output passed in the labeller's eyes."""
    labeller: str
    """Who labelled."""
    created_at: datetime
    """When the label was made (timezone-aware); the latest label per key counts."""
    check: str = DEFAULT_CHECK
    """The label check this verdict is for (a `human` check's `check:` parameter)."""
    note: str = ""
    """An optional remark for people."""
    tenant: str = ""
    """The tenant (bearer token name) whose outputs this label judges; empty with auth off."""


@dataclass(frozen=True, slots=True)
class LabelQuery:
    """Filters of a label listing; empty strings match everything."""

    sample_id: str = ""
    output_hash: str = ""
    check: str = ""
    labeller: str = ""
    include_history: bool = False
    """List every stored label rather than only the latest per key."""
    tenant: str = ""
    """Only this tenant's labels (a token name is never empty, so empty means every tenant)."""

    def filters(self) -> list[tuple[str, str]]:
        """(column, value) of every filter set, with the stores' column names."""
        pairs = (
            ("sample_id", self.sample_id),
            ("output_hash", self.output_hash),
            ("label_check", self.check),
            ("labeller", self.labeller),
            ("tenant", self.tenant),
        )
        return [(column, value) for column, value in pairs if value]


@dataclass(frozen=True, slots=True)
class PutKey:
    """Makes a write idempotent: a put repeating a stored key stores nothing new."""

    scope: str
    """Whose request ids these are: the writing token's name (empty with auth off)."""
    request_id: str
    """The client's identifier of the write."""
    fingerprint: str
    """A digest of the labels as the client sent them; a reused id must send the same."""


LOOKUP_LIMIT = 10_000
"""Most labels one lookup reads (one per labeller of one output: far more than enough)."""
OUTPUTS_PER_CALL = 500
"""Outputs a reader asks `labels_of_outputs` for at once (a store may read them in a few
statements: see each store)."""


def counting_labels(found: Sequence[tuple[int, Label]]) -> list[Label]:
    """The latest label of each labeller (as listed), ordered by labeller (then tenant)."""
    return sorted((label for _, label in found), key=lambda lb: (lb.labeller, lb.tenant))


class LabelsUnavailable(Exception):
    """The label store did not answer (down, unreachable, too slow, or closed).

    Raised by a write, it means the write stored nothing (it was rolled back or never
    began); `LabelsOutcomeUnknown` is the case where that cannot be known.
    """


class LabelsOutcomeUnknown(LabelsUnavailable):
    """A write failed or went unconfirmed after its commit began: it may have been stored."""


class RequestIdReused(Exception):
    """A put's request id was already used, within its scope, for other labels."""


class LabelStore(Protocol):
    """Where the service keeps labels: SQLite or PostgreSQL.

    Every method raises `LabelsUnavailable` when the store does not answer; a write
    that returned has been committed to durable storage, and a write that raised
    `LabelsUnavailable` but not `LabelsOutcomeUnknown` stored nothing.
    """

    async def put(self, labels: Sequence[Label], key: PutKey | None = None) -> list[Label]:
        """Store every label or none, durably, before returning the labels as stored.

        With a `key` already stored, store nothing and return the labels its first put
        stored; `RequestIdReused` when that put carried other labels.
        """

    async def lookup(
        self, sample_id: str, output_hash: str, check: str, *, tenant: str = ""
    ) -> list[Label]:
        """The counting label of each labeller for this sample, output, check (and tenant)."""

    async def list_labels(
        self, query: LabelQuery, *, after_id: int, limit: int
    ) -> list[tuple[int, Label]]:
        """Up to `limit` labels with storage ids above `after_id`, by id, with their ids."""

    async def labels_of_outputs(
        self, query: LabelQuery, outputs: Sequence[tuple[str, str]]
    ) -> list[Label]:
        """The labels `list_labels(query)` lists (the latest per key: `include_history` is
        ignored) whose (sample_id, output_hash) is one of `outputs`, in storage order.

        A few statements for `OUTPUTS_PER_CALL` outputs, instead of one per output.
        """

    async def close(self) -> None:
        """Release connections; later calls raise `LabelsUnavailable`."""


def latest_per_labeller(labels: Sequence[Label]) -> list[Label]:
    """The counting label of each labeller among labels of one (sample, output, check).

    `labels` must be in storage order, so that of two labels with the same `created_at`
    the later one wins.
    """
    latest: dict[str, Label] = {}
    for label in labels:
        seen = latest.get(label.labeller)
        if seen is None or label.created_at >= seen.created_at:
            latest[label.labeller] = label
    return [latest[k] for k in sorted(latest)]


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the counting labels of one output say."""

    value: float
    """The fraction of labellers whose label passed; 0 with no label."""
    passed: bool
    """True when at least one label exists and every labeller's label passed."""
    reason: str


NO_LABEL_REASON = "no label for this output"


def verdict(labels: Sequence[Label]) -> Verdict:
    """Combine the counting labels (one per labeller) of one output into a verdict.

    Every labeller must have passed the output: a disagreement is a fail, so one
    person's doubt is never outvoted silently.
    """
    if not labels:
        return Verdict(0.0, False, NO_LABEL_REASON)
    failed = [lb for lb in labels if not lb.passed]
    value = (len(labels) - len(failed)) / len(labels)
    if not failed:
        who = ", ".join(lb.labeller for lb in labels)
        return Verdict(value, True, f"labelled pass by {who}")
    first = failed[0]
    note = f": {first.note}" if first.note else ""
    if len(labels) == 1:
        return Verdict(value, False, f"labelled fail by {first.labeller}{note}")
    return Verdict(
        value,
        False,
        f"labelled fail by {len(failed)} of {len(labels)} labellers "
        f"({', '.join(lb.labeller for lb in failed)}){note}",
    )
