"""The run store's model: runs, their recorded chunks, queries, and the store protocol.

A run's results are kept as the chunks the server sent them in: each chunk holds the
cases as sent and the results message as sent, both opaque bytes to the store (the
server's protobuf encoding; `ChunkCodec` decodes them). Writing a 256-case chunk is then
one row and no per-case work on the scoring path; reads decode, and reads are rare.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Protocol

from scorewire.core.model import Spread


class RunsUnavailable(Exception):
    """The run store did not answer, failed, or is closed; nothing more is known.

    The message is the caller's: it names the store and what happened, and never quotes
    the database driver's error (which may name the database's host); stores log that.
    """


class RunStatus(StrEnum):
    """Whether a run finished."""

    RUNNING = "running"
    """In progress on a live server (its owner's heartbeat is fresh)."""
    COMPLETE = "complete"
    """Finished, with its summary."""
    INCOMPLETE = "incomplete"
    """Stopped before its end: cancelled, failed, or its server died."""


class Outcome(StrEnum):
    """What one score did; one character per check in `CaseRecord.outcomes`."""

    PASSED = "P"
    FAILED = "F"
    ERRORED = "E"
    SKIPPED = "S"


def new_run_id() -> str:
    """A fresh run id: `run_` and 20 random hex digits (unguessable, URL-safe)."""
    return "run_" + secrets.token_hex(10)


def utc_now() -> datetime:
    """The current time, in UTC, to the microsecond."""
    return datetime.now(UTC)


@dataclass(slots=True)
class RunInfo:
    """One run's metadata and summary, as stored."""

    run_id: str
    name: str
    source: str
    """`RunSuite`, `ScoreStream` or `cli`."""
    tenant: str
    """The token name of its caller; empty when auth was off."""
    labels: dict[str, str]
    started_at: datetime
    suite: str
    """The suite as sent (YAML, or the checks as JSON)."""
    suite_sha256: str
    checks: list[str]
    """Check names in plan order."""
    status: RunStatus = RunStatus.RUNNING
    ended_at: datetime | None = None
    results: int = 0
    """Case results recorded."""
    summary: dict[str, Any] | None = None
    """The summary as JSON (the results file's `summary` shape); None until complete."""
    owner: str = ""
    """The server process that records it (heartbeats mark a dead owner's runs incomplete)."""


@dataclass(slots=True)
class Chunk:
    """Several recorded cases: the cases and the results message, as sent."""

    run_id: str
    cases: bytes
    results: bytes
    count: int
    keys: tuple[str, ...] = ()
    """Identities of its cases within `scope`, stored in the chunk's own transaction:
    a writer that may be handed the same cases again (the observation consumer, after a
    replica died between recording and acknowledging) asks `RunStore.recorded` first."""
    scope: str = ""


@dataclass(slots=True)
class RunQuery:
    """Filters of a run listing; empty fields do not filter."""

    tenant: str | None = None
    """Only this tenant's runs; None for every tenant (admin, or auth off)."""
    name: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    started_after: datetime | None = None
    started_before: datetime | None = None
    status: RunStatus | None = None

    def digest_parts(self) -> Iterable[str]:
        """The filters as text, for page tokens that belong to one listing."""
        yield self.tenant if self.tenant is not None else "\0all"
        yield self.name
        for k in sorted(self.labels):
            yield f"{k}={self.labels[k]}"
        yield self.started_after.isoformat() if self.started_after else ""
        yield self.started_before.isoformat() if self.started_before else ""
        yield self.status or ""


@dataclass(slots=True)
class ScoreRecord:
    """One recorded score."""

    name: str
    type: str
    value: float
    passed: bool
    reason: str
    cost_usd: float
    latency_ms: float
    cached: bool
    skipped: bool
    error_code: str = ""
    error_message: str = ""
    judges: tuple[str, ...] = ()
    """The judges asked (`backend:model`); empty for a check that asked none."""
    reported_models: tuple[str, ...] = ()
    """The models the judges' providers reported answering (`scorewire.core.judged`)."""
    prompt_version: str = ""
    """The judge prompts' version; empty for a check that asked no judge."""
    spread: Spread | None = None
    """How far a repeatedly sampled judge's samples (or a panel's judges) agreed, as the
    score recorded it; None for one answer. The viewer's reviewer queue puts the cases
    whose samples disagree first."""

    @property
    def outcome(self) -> Outcome:
        """Passed, failed, errored or skipped."""
        if self.skipped:
            return Outcome.SKIPPED
        if self.error_code or self.error_message:
            return Outcome.ERRORED
        return Outcome.PASSED if self.passed else Outcome.FAILED


@dataclass(slots=True)
class CaseRecord:
    """One recorded case: what was scored and every score."""

    index: int
    sample_id: str
    input: Any
    expected: Any
    output: str
    output_value: Any
    passed: bool
    scores: list[ScoreRecord]
    raw: Any = None
    """The codec's own form of the case (the server's protobuf messages), for re-sending."""

    @property
    def key(self) -> str:
        """How cases are matched between runs: the sample id, else `#` and the index."""
        return self.sample_id or f"#{self.index}"

    def outcome_of(self, check: str) -> Outcome | None:
        """The outcome of the score named `check`; None when the case has no such score."""
        for s in self.scores:
            if s.name == check:
                return s.outcome
        return None

    def matches(self, check: str, outcome: Outcome | None) -> bool:
        """Whether this case passes a ListRunResults filter."""
        scores: Sequence[ScoreRecord] = self.scores
        if check:
            scores = [s for s in scores if s.name == check]
            if not scores:
                return False
        return outcome is None or any(s.outcome == outcome for s in scores)


class ChunkCodec(Protocol):
    """Decodes the chunks the server stored into case records."""

    def decode(self, chunk: Chunk) -> list[CaseRecord]:
        """The chunk's cases, in the order they were recorded."""


class RunStore(Protocol):
    """Where runs are kept: SQLite (`sqlite.SqliteRunStore`) or PostgreSQL."""

    async def write(
        self,
        created: Sequence[RunInfo],
        chunks: Sequence[Chunk],
        finished: Sequence[RunInfo],
    ) -> None:
        """Create runs, append chunks and finish runs, all in one transaction, in that order."""

    async def recorded(self, scope: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` a chunk recorded in `scope` (see `Chunk.keys`)."""

    async def forget_recorded(self, before: datetime) -> int:
        """Forget the keys recorded before `before`; how many."""

    async def heartbeat(self, owner: str, now: datetime) -> None:
        """Say that `owner` (a server process) is alive."""

    async def mark_stale(self, seen_before: datetime) -> int:
        """Mark incomplete the running runs of owners not seen since `seen_before`."""

    async def reopen(self, run_id: str) -> bool:
        """Mark running again a run marked incomplete (a job's, resumed by another server
        after its heartbeat went stale); False when it was not incomplete."""

    async def enforce_retention(self, *, older_than: datetime | None, keep: int | None) -> int:
        """Delete runs started before `older_than`, and all but the newest `keep`."""

    async def get_run(self, run_id: str) -> RunInfo | None:
        """The run, or None."""

    async def list_runs(
        self, query: RunQuery, *, after: tuple[datetime, str] | None, limit: int
    ) -> list[RunInfo]:
        """Up to `limit` runs, newest first, after the (started_at, run_id) cursor."""

    async def chunks(self, run_id: str, *, after_seq: int, limit: int) -> list[tuple[int, Chunk]]:
        """Up to `limit` chunks of the run with sequence numbers above `after_seq`."""

    async def delete_run(self, run_id: str) -> bool:
        """Delete the run and its chunks; False when there was none."""

    async def close(self) -> None:
        """Release the store; later calls raise RunsUnavailable."""
