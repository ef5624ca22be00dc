"""Human review from the served viewer: a person's pass/fail and note on one case, written
to the label store the LabelService serves, as a label on that exact output.

The label store is async and lives on the server's event loop (as the run store does,
`store`); `Reviews.write` hands the write to that loop from the viewer's request thread
and waits for it, at most the viewer's request timeout.

Tenancy: the label belongs to the run's tenant (the tenant whose outputs it judges; a
caller sees only its own runs, so that is its own) and records the signed-in token's name
as labeller, as LabelService does for a `caller`; an admin reviewing another tenant's run
writes there as itself, as LabelService lets it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from scorewire.labels.label_model import (
    MAX_NOTE_CHARS,
    OUTPUTS_PER_CALL,
    Label,
    LabelQuery,
    LabelStore,
    LabelsUnavailable,
    latest_per_labeller,
    output_hash,
    utc_now,
)
from scorewire.viewer.view_model import CaseResult, SourceUnavailable

NO_AUTH_LABELLER = "viewer"
"""The labeller of a review made with auth off (no token names anyone)."""


@dataclass(frozen=True, slots=True)
class Review:
    """One person's verdict on one case of a run."""

    passed: bool
    """Whether the output passes in the reviewer's eyes."""
    note: str = ""
    """Why, at most `MAX_NOTE_CHARS` characters."""


def review_label(case: CaseResult, review: Review, *, labeller: str, tenant: str) -> Label:
    """The label a review writes: bound to the sample id and the exact output shown."""
    return Label(
        sample_id=case.sample_id,
        output_hash=output_hash(case.output or ""),
        passed=review.passed,
        labeller=labeller,
        created_at=utc_now(),
        note=review.note[:MAX_NOTE_CHARS],
        tenant=tenant,
    )


def case_at(cases: Iterable[CaseResult], index: int) -> CaseResult | None:
    """The case at `index` of its run, when it has an output to review."""
    return next((c for c in cases if c.index == index and c.output is not None), None)


class Reviews:
    """The label store as seen from the viewer's threads: each write goes to `loop`."""

    def __init__(
        self, labels: LabelStore, loop: asyncio.AbstractEventLoop, *, timeout_s: float
    ) -> None:
        self.labels = labels
        self.loop = loop
        self.timeout_s = timeout_s

    def labels_of(
        self, tenant: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[Label]]:
        """The counting labels (the latest per labeller) of each (sample id, output hash)
        of `tenant`'s outputs that has any; SourceUnavailable when the store does not
        answer in time."""
        found: dict[tuple[str, str], list[Label]] = self._wait(self._labels_of(tenant, keys))
        return found

    async def _labels_of(
        self, tenant: str, keys: Sequence[tuple[str, str]]
    ) -> dict[tuple[str, str], list[Label]]:
        wanted = list(dict.fromkeys(keys))
        grouped: dict[tuple[str, str], list[Label]] = {}
        for start in range(0, len(wanted), OUTPUTS_PER_CALL):
            chunk = wanted[start : start + OUTPUTS_PER_CALL]
            for label in await self.labels.labels_of_outputs(LabelQuery(tenant=tenant), chunk):
                grouped.setdefault((label.sample_id, label.output_hash), []).append(label)
        return {key: latest_per_labeller(found) for key, found in grouped.items()}

    def write(self, label: Label) -> None:
        """Store the label durably; SourceUnavailable when the store does not answer in
        time (the write may then still land: a reviewer who sends it again adds the
        same verdict, and the latest label per labeller is the one that counts)."""
        self._wait(self.labels.put([label]), writes=True)

    def _wait(self, call: Any, *, writes: bool = False) -> Any:
        future = asyncio.run_coroutine_threadsafe(call, self.loop)
        try:
            return future.result(self.timeout_s)
        except concurrent.futures.TimeoutError:
            future.cancel()
            lost = ": a review sent may not have been stored" if writes else ""
            raise SourceUnavailable(
                "the label store did not answer within SCOREWIRE_VIEWER_REQUEST_TIMEOUT_S "
                f"({self.timeout_s:g} s){lost}"
            ) from None
        except LabelsUnavailable as err:
            raise SourceUnavailable(f"{err}; try again later") from None
