"""Pass rate over time for each run name: the points of a small chart the runs list draws
as inline SVG (made on the server: the pages run no charting script and fetch nothing)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scorewire.viewer.view_model import RunInfo

WIDTH, HEIGHT, PAD = 240.0, 48.0, 4.0
"""The chart's size in SVG units, and the margin that keeps the dots inside it."""
MAX_POINTS = 30
"""Runs a chart shows: a name's newest ones."""


@dataclass(frozen=True, slots=True)
class TrendPoint:
    """One run on the chart: x from oldest (left) to newest (right), y from 100 % (top)
    to 0 % (bottom), in SVG units."""

    run: RunInfo
    """The run."""
    x: float
    """Horizontal position."""
    y: float
    """Vertical position."""


@dataclass(frozen=True, slots=True)
class Trend:
    """The pass rates of the runs sharing a name, oldest first."""

    name: str
    """The runs' name."""
    points: list[TrendPoint]
    """At least two runs, oldest first."""
    runs: int
    """Runs with this name (more than `points` when they were cut to `MAX_POINTS`)."""

    @property
    def polyline(self) -> str:
        """The `points` attribute of the chart's line."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)


def pass_rate_trends(runs: Iterable[RunInfo]) -> list[Trend]:
    """A trend per run name with at least two dated runs, in order of each name's newest
    run (newest first). Online evaluation's rolling runs, one a day per rule
    (`observe/<rule>/<day>`), make one trend per rule, `observe/<rule>`: its pass rate day
    by day."""
    by_name: dict[str, list[RunInfo]] = {}
    for run in runs:
        if run.started_at is not None:
            by_name.setdefault(trend_name(run), []).append(run)
    trends = []
    for name, named in by_name.items():
        if len(named) < 2:
            continue
        named.sort(key=lambda r: (r.started_at, r.id))
        shown = named[-MAX_POINTS:]
        step = (WIDTH - 2 * PAD) / (len(shown) - 1)
        points = [
            TrendPoint(r, PAD + i * step, PAD + (1.0 - _clamp(r.pass_rate)) * (HEIGHT - 2 * PAD))
            for i, r in enumerate(shown)
        ]
        trends.append(Trend(name, points, len(named)))
    trends.sort(key=lambda t: (t.points[-1].run.started_at, t.name), reverse=True)
    return trends


def trend_name(run: RunInfo) -> str:
    """The trend a run belongs to: its name, or for a rolling run of online evaluation
    (labelled with its rule) `observe/<rule>`, whatever its day."""
    rule = run.labels.get("observe_rule")
    return f"observe/{rule}" if rule and run.name.startswith(f"observe/{rule}/") else run.name


def _clamp(rate: float) -> float:
    return min(1.0, max(0.0, rate)) if rate == rate else 0.0  # NaN draws at 0
