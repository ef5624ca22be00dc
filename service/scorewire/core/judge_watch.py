"""The judge watch's settings: drift between recorded runs, and calls per output.

A nested part of the server's settings (`Settings.judge_watch`), set through
`SCOREWIRE_JUDGE_WATCH__<FIELD>` (`SCOREWIRE_JUDGE_WATCH__DRIFT_LIMIT=0.05`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class JudgeWatchSettings(BaseModel):
    """How far a judge may drift between recorded runs, and how many calls one output may
    cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    drift_limit: float = Field(0.1, ge=0.0, le=1.0)
    """How far a judge-backed check's mean over the holdout of two recorded runs of one
    name (the cases they share with the same output) may move before it counts as drift:
    exported as `scorewire_judge_drift_limit`, which the ScorewireJudgeDrift alert compares
    `scorewire_judge_drift` with, and used by `scorewire run --baseline` and the viewer's
    compare page to flag a check."""
    max_calls_per_output: int = Field(64, ge=1, le=4096)
    """Most judge calls one check may make for one output: its judges (a panel's, or a
    cascade's stages) times each one's `samples:`. A request with a check asking more is
    refused RESOURCE_EXHAUSTED naming this setting and the check's `judges`, `cascade` or
    `samples` field, before any judge is called."""
