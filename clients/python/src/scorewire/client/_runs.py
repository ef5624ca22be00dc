"""RunService requests from plain Python values, shared by the sync and asyncio clients."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from scorewire.v1 import runs_pb2 as rpb

OUTCOMES = {
    "passed": rpb.OUTCOME_PASSED,
    "failed": rpb.OUTCOME_FAILED,
    "errored": rpb.OUTCOME_ERRORED,
    "skipped": rpb.OUTCOME_SKIPPED,
}
STATUSES = {
    "running": rpb.RUN_STATUS_RUNNING,
    "complete": rpb.RUN_STATUS_COMPLETE,
    "incomplete": rpb.RUN_STATUS_INCOMPLETE,
}


def _enum(value: str | int | None, names: Mapping[str, int], what: str) -> int:
    if value is None or value == "":
        return 0
    if isinstance(value, int):
        return value
    try:
        return names[value]
    except KeyError:
        raise ValueError(f"{what} must be one of {', '.join(names)}, not {value!r}") from None


def list_runs_request(
    *,
    name: str,
    labels: Mapping[str, str] | None,
    started_after: datetime | None,
    started_before: datetime | None,
    status: str | int | None,
    page_size: int,
    page_token: str,
) -> rpb.ListRunsRequest:
    """The ListRunsRequest for `Client.list_runs` (a datetime without a zone is UTC)."""
    req = rpb.ListRunsRequest(
        name=name,
        labels=dict(labels or {}),
        status=_enum(status, STATUSES, "status"),  # type: ignore[arg-type]
        page_size=page_size,
        page_token=page_token,
    )
    if started_after is not None:
        req.started_after.FromDatetime(started_after)
    if started_before is not None:
        req.started_before.FromDatetime(started_before)
    return req


def list_results_request(
    run_id: str, *, check: str, outcome: str | int | None, page_size: int, page_token: str
) -> rpb.ListRunResultsRequest:
    """The ListRunResultsRequest for `Client.list_run_results`."""
    return rpb.ListRunResultsRequest(
        run_id=run_id,
        check=check,
        outcome=_enum(outcome, OUTCOMES, "outcome"),  # type: ignore[arg-type]
        page_size=page_size,
        page_token=page_token,
    )
