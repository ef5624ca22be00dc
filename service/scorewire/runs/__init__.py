"""Recorded runs: the run store (SQLite or PostgreSQL), its writer, and run comparison.

`open_run_store(settings)` opens the store the settings name: PostgreSQL when
`runs_url` is set (shared by replicas), else the SQLite file at `runs_path` under the
state directory. The read API the server and the viewer use:

- `store.list_runs(RunQuery(...), after=cursor, limit=n)`: runs, newest first;
- `store.get_run(run_id)`: one run's metadata and summary (`RunInfo`);
- `iter_results(store, codec, run_id, check=..., outcome=...)`: its case records;
- `compare(RunOutcomes.of_records(a), RunOutcomes.of_records(b))`: two runs compared.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

from scorewire.runs.compare import (
    CaseChange,
    CheckDelta,
    CheckStats,
    Comparison,
    RunOutcomes,
    baseline_reasons,
    compare,
    score_outcome,
)
from scorewire.runs.drift import CheckDrift, DriftWatch, judge_drift
from scorewire.runs.recorder import RunRecorder
from scorewire.runs.run_model import (
    CaseRecord,
    Chunk,
    ChunkCodec,
    Outcome,
    RunInfo,
    RunQuery,
    RunStatus,
    RunStore,
    RunsUnavailable,
    ScoreRecord,
    new_run_id,
    utc_now,
)

if TYPE_CHECKING:
    from scorewire.settings import Settings

__all__ = [
    "CaseChange",
    "CaseRecord",
    "CheckDelta",
    "CheckDrift",
    "CheckStats",
    "Chunk",
    "ChunkCodec",
    "Comparison",
    "DriftWatch",
    "Outcome",
    "RunInfo",
    "RunOutcomes",
    "RunQuery",
    "RunRecorder",
    "RunStatus",
    "RunStore",
    "RunsUnavailable",
    "ScoreRecord",
    "baseline_reasons",
    "compare",
    "iter_chunks",
    "iter_results",
    "judge_drift",
    "new_run_id",
    "open_run_store",
    "score_outcome",
    "utc_now",
]

CHUNKS_PER_READ = 16
"""Chunks one read of the store brings (up to 256 cases each): the page a reader holds."""


async def iter_chunks(
    store: RunStore, run_id: str, *, after_seq: int = 0
) -> AsyncIterator[tuple[int, Chunk]]:
    """The run's chunks after sequence number `after_seq`, in recorded order, with their
    sequence numbers; read `CHUNKS_PER_READ` at a time, so a reader holds one page."""
    cursor = after_seq
    while True:
        chunks = await store.chunks(run_id, after_seq=cursor, limit=CHUNKS_PER_READ)
        if not chunks:
            return
        for chunk_seq, chunk in chunks:
            yield chunk_seq, chunk
            cursor = chunk_seq


async def iter_results(
    store: RunStore,
    codec: ChunkCodec,
    run_id: str,
    *,
    check: str = "",
    outcome: Outcome | None = None,
    after: tuple[int, int] = (0, 0),
) -> AsyncIterator[tuple[tuple[int, int], CaseRecord]]:
    """The run's case records matching the filter, in recorded order, each with its position.

    A position (chunk sequence number, index in that chunk) says where to resume: pass
    it back as `after` to continue after that record (pages do); (0, 0) is the start.
    """
    seq, resume_at = after
    async for chunk_seq, chunk in iter_chunks(store, run_id, after_seq=seq - 1 if seq else 0):
        records = codec.decode(chunk)
        start = resume_at if chunk_seq == seq else 0
        for i in range(start, len(records)):
            if records[i].matches(check, outcome):
                yield (chunk_seq, i + 1), records[i]


async def open_run_store(settings: Settings) -> RunStore:
    """The run store the settings name; RunsUnavailable when SQLite cannot be opened."""
    if settings.runs_url is not None:
        from scorewire.runs.postgres import PostgresRunStore

        return await PostgresRunStore.open(
            settings.runs_url.get_secret_value(),
            timeout_s=settings.store_timeout_s,
            maintenance_timeout_s=settings.runs_heartbeat_s,
        )
    from scorewire.runs.sqlite import SqliteRunStore

    try:
        path = settings.runs_file()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    except (OSError, RuntimeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise RunsUnavailable(
            f"cannot open the run store under the state directory ({reason}): set "
            "SCOREWIRE_STATE_DIR to a directory this user can write, or keep runs in "
            "PostgreSQL with SCOREWIRE_RUNS_URL"
        ) from None
    return await SqliteRunStore.open(str(path))
