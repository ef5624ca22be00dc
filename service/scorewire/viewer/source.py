"""Where the viewer's runs come from: the `RunSource` protocol and its results-file sources.

`RunSource` is all the pages need. `ResultsFile` reads one `scorewire run --output`
file, `ResultsDirectory` every such file under a directory (what the served viewer shows
when `viewer_results_dir` is set; the run store's source is `scorewire.server.viewer_runs`).
A results file carries no run id, start
time or labels of its own: the id is the file's path without `.json`, the time its
modification time, and labels come from an optional top-level `"labels"` object.
"""

from __future__ import annotations

import json
import logging
import threading
from collections import OrderedDict
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from scorewire.viewer.run_views import compare_runs
from scorewire.viewer.view_model import (
    CaseResult,
    CheckStats,
    Comparison,
    Outcome,
    RunDetail,
    RunInfo,
    RunNotFound,
    ScoreResult,
    Spread,
)

log = logging.getLogger("scorewire.viewer")

RESULTS_FORMAT = "scorewire.results/1"
"""The `format` of a results file (`scorewire.cli.run_output`)."""


class RunSource(Protocol):
    """The read side of a run store, as the viewer uses it."""

    def list_runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        ...

    def get_run(self, run_id: str) -> RunDetail:
        """A run's summary; RunNotFound for an unknown id."""
        ...

    def results(
        self, run_id: str, check: str | None = None, outcome: Outcome | None = None
    ) -> list[CaseResult]:
        """A run's cases in run order, those matching the filter (`CaseResult.has`)."""
        ...

    def compare(self, base_id: str, run_id: str) -> Comparison:
        """`run_id` against `base_id`, cases matched by sample id, regressions first."""
        ...


class InvalidResults(ValueError):
    """A file that is not a scorewire results file; the message says why."""


# ---- reading a results document ------------------------------------------------------------


def _error(raw: Any) -> tuple[str, str] | None:
    if not isinstance(raw, dict):
        return None
    return str(raw.get("code", "")), str(raw.get("message", ""))


def _score(raw: dict[str, Any]) -> ScoreResult:
    value = raw.get("value")
    return ScoreResult(
        name=str(raw.get("name", "")),
        type=str(raw.get("type", "")),
        value=float(value) if isinstance(value, int | float) else None,
        passed=bool(raw.get("passed")),
        reason=str(raw.get("reason") or ""),
        skipped=bool(raw.get("skipped")),
        cached=bool(raw.get("cached")),
        cost_usd=float(raw.get("cost_usd") or 0.0),
        error=_error(raw.get("error")),
        latency_ms=_number(raw.get("latency_ms")) or 0.0,
        spread=_spread(raw.get("spread")),
        judges=_strings(raw.get("judge"), "models"),
        reported_models=_strings(raw.get("judge"), "reported_models"),
        prompt_version=_prompt_version(raw.get("judge")),
    )


def _prompt_version(judge: Any) -> str:
    version = judge.get("prompt_version") if isinstance(judge, dict) else None
    return version if isinstance(version, str) else ""


def _number(raw: Any) -> float | None:
    return float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else None


def _strings(raw: Any, key: str) -> tuple[str, ...]:
    """A list of strings under `key` of a results file's `judge` record; () without one."""
    items = raw.get(key) if isinstance(raw, dict) else None
    return tuple(str(x) for x in items) if isinstance(items, list) else ()


def _spread(raw: Any) -> Spread | None:
    if not isinstance(raw, dict):
        return None
    values = tuple(float(v) for v in raw.get("values") or () if _number(v) is not None)
    return Spread(
        int(raw.get("samples") or len(values)), _number(raw.get("agreement")) or 0.0, values
    )


def _case(raw: dict[str, Any], position: int) -> CaseResult:
    generation = raw.get("generation") or {}
    if not isinstance(generation, dict):
        generation = {}
    output = raw.get("output")
    scores = [_score(s) for s in raw.get("scores") or [] if isinstance(s, dict)]
    return CaseResult(
        index=int(raw.get("index", position)),
        sample_id=str(raw.get("sample_id") or ""),
        input=raw.get("input"),
        expected=raw.get("expected"),
        output=None if output is None else str(output),
        passed=bool(raw.get("passed")),
        scores=scores,
        description=str(raw.get("description") or ""),
        provider=str(raw.get("provider") or ""),
        prompt=None if raw.get("prompt") is None else str(raw["prompt"]),
        generation_error=_error(generation.get("error")),
        cost_usd=(_number(generation.get("cost_usd")) or 0.0) + sum(s.cost_usd for s in scores),
        latency_ms=_number(generation.get("latency_ms")),
        test=_index(raw.get("test")),
        prompt_index=_index(raw.get("prompt_index")),
    )


def _index(raw: Any) -> int | None:
    """A test's or prompt's index as the results file gives it; None when absent or not one."""
    number = _number(raw)
    return int(number) if number is not None and number >= 0 and number == int(number) else None


def _check(raw: dict[str, Any]) -> CheckStats:
    return CheckStats(
        name=str(raw.get("name", "")),
        type=str(raw.get("type", "")),
        passed=int(raw.get("passed", 0)),
        failed=int(raw.get("failed", 0)),
        errored=int(raw.get("errored", 0)),
        skipped=int(raw.get("skipped", 0)),
        mean_value=float(raw.get("mean_value") or 0.0),
        cost_usd=float(raw.get("cost_usd") or 0.0),
        cached=int(raw.get("cached", 0)),
    )


def parse_document(
    doc: Any, run_id: str, started_at: datetime | None
) -> tuple[RunDetail, list[CaseResult]]:
    """A results document (parsed JSON) as the viewer's run and cases."""
    if not isinstance(doc, dict) or doc.get("format") != RESULTS_FORMAT:
        raise InvalidResults(f'not a scorewire results file (no "format": "{RESULTS_FORMAT}")')
    suite = doc.get("suite") or {}
    summary = doc.get("summary") or {}
    gate = summary.get("gate") or {}
    raw_labels = doc.get("labels") or {}
    labels = {str(k): str(v) for k, v in raw_labels.items()} if isinstance(raw_labels, dict) else {}
    info = RunInfo(
        id=run_id,
        name=str(suite.get("name") or run_id),
        started_at=started_at,
        suite_format=str(suite.get("format") or ""),
        cases=int(summary.get("cases", 0)),
        pass_rate=float(summary.get("pass_rate") or 0.0),
        error_rate=float(summary.get("error_rate") or 0.0),
        cost_usd=float(summary.get("cost_usd") or 0.0),
        gate_passed=bool(gate.get("passed")),
        labels=labels,
        interrupted=bool(doc.get("interrupted")),
    )
    budget = summary.get("budget_usd")
    detail = RunDetail(
        info=info,
        checks=[_check(c) for c in summary.get("checks") or [] if isinstance(c, dict)],
        gate_reasons=[str(r) for r in gate.get("reasons") or []],
        cases_passed=int(summary.get("cases_passed", 0)),
        planned_cases=int(summary.get("planned_cases", summary.get("cases", 0))),
        judge_cost_usd=float(summary.get("judge_cost_usd") or 0.0),
        generation_cost_usd=float(summary.get("generation_cost_usd") or 0.0),
        saved_usd=float(summary.get("saved_usd") or 0.0),
        cached_scores=int(summary.get("cached_scores", 0)),
        cached_generations=int(summary.get("cached_generations", 0)),
        budget_usd=float(budget) if isinstance(budget, int | float) else None,
        unpriced=bool(summary.get("unpriced")),
        description=str(suite.get("description") or ""),
    )
    raw_results = doc.get("results") or []
    cases = [_case(r, i) for i, r in enumerate(raw_results) if isinstance(r, dict)]
    return detail, cases


def read_results_file(path: Path, run_id: str) -> tuple[RunDetail, list[CaseResult]]:
    """Read and parse one results file; InvalidResults (naming the file) when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
        stat = path.stat()
    except OSError as err:
        raise InvalidResults(f"{path}: cannot be read ({err.strerror})") from None
    try:
        doc = json.loads(text)
    except ValueError as err:
        raise InvalidResults(f"{path}: not JSON ({err})") from None
    try:
        return parse_document(doc, run_id, datetime.fromtimestamp(stat.st_mtime, UTC))
    except InvalidResults as err:
        raise InvalidResults(f"{path}: {err}") from None
    except (TypeError, ValueError, AttributeError) as err:
        raise InvalidResults(f"{path}: a field has the wrong type ({err})") from None


def filter_cases(
    cases: Iterable[CaseResult], check: str | None, outcome: Outcome | None
) -> list[CaseResult]:
    """The cases matching a filter (see `CaseResult.has`)."""
    return [c for c in cases if c.has(check, outcome)]


# ---- sources -----------------------------------------------------------------------------


class _LoadedRuns:
    """Shared by the file sources: results by id, and compare computed from them."""

    def _load(self, run_id: str) -> tuple[RunDetail, list[CaseResult]]:
        raise NotImplementedError

    def get_run(self, run_id: str) -> RunDetail:
        """A run's summary; RunNotFound for an unknown id."""
        return self._load(run_id)[0]

    def results(
        self, run_id: str, check: str | None = None, outcome: Outcome | None = None
    ) -> list[CaseResult]:
        """A run's cases in run order, those matching the filter."""
        return filter_cases(self._load(run_id)[1], check, outcome)

    def compare(self, base_id: str, run_id: str) -> Comparison:
        """`run_id` against `base_id`, computed from both runs' cases."""
        base, base_cases = self._load(base_id)
        run, cases = self._load(run_id)
        return compare_runs(base, base_cases, run, cases)


class ResultsFile(_LoadedRuns):
    """One results file (or several given by path) as a source; read once, when built."""

    def __init__(self, *paths: Path) -> None:
        self._runs: dict[str, tuple[RunDetail, list[CaseResult]]] = {}
        for path in paths:
            run_id = path.stem
            while run_id in self._runs:  # base.json and ../base.json in one report
                run_id += "_"
            self._runs[run_id] = read_results_file(path, run_id)
        self.ids = list(self._runs)
        """The runs' ids, in the order their files were given."""

    def _load(self, run_id: str) -> tuple[RunDetail, list[CaseResult]]:
        try:
            return self._runs[run_id]
        except KeyError:
            raise RunNotFound(run_id) from None

    def list_runs(self) -> list[RunInfo]:
        """Every run, newest first."""
        return _newest_first(detail.info for detail, _ in self._runs.values())


def _newest_first(runs: Iterable[RunInfo]) -> list[RunInfo]:
    epoch = datetime.min.replace(tzinfo=UTC)
    return sorted(runs, key=lambda r: (r.started_at or epoch, r.id), reverse=True)


class ResultsDirectory(_LoadedRuns):
    """Every results file under a directory (recursively); files that are not results
    files are left out of the list. Re-read when a file changes; thread-safe.

    A run's id is its path relative to the directory without `.json`; only ids found by
    listing are ever opened, so an id cannot name a file outside the directory.
    """

    def __init__(self, root: Path, *, cached_runs: int = 4) -> None:
        self.root = root
        self._lock = threading.Lock()
        # (mtime_ns, size) of each file seen, and its summary (None: not a results file).
        self._infos: dict[Path, tuple[tuple[int, int], RunInfo | None]] = {}
        self._full: OrderedDict[Path, tuple[tuple[int, int], tuple[RunDetail, list[CaseResult]]]]
        self._full = OrderedDict()
        self._cached_runs = cached_runs

    def _paths(self) -> dict[str, Path]:
        if not self.root.is_dir():
            return {}
        found: dict[str, Path] = {}
        for path in sorted(self.root.rglob("*.json")):
            if path.is_file() and not any(p.startswith(".") for p in path.parts[-1:]):
                found[path.relative_to(self.root).with_suffix("").as_posix()] = path
        return found

    @staticmethod
    def _stamp(path: Path) -> tuple[int, int]:
        st = path.stat()
        return st.st_mtime_ns, st.st_size

    def list_runs(self) -> list[RunInfo]:
        """Every results file's run, newest first."""
        runs = []
        for run_id, path in self._paths().items():
            info = self._info(run_id, path)
            if info is not None:
                runs.append(info)
        return _newest_first(runs)

    def _info(self, run_id: str, path: Path) -> RunInfo | None:
        try:
            stamp = self._stamp(path)
        except OSError:
            return None
        with self._lock:
            seen = self._infos.get(path)
        if seen is not None and seen[0] == stamp:
            return seen[1]
        try:
            info: RunInfo | None = self._read(run_id, path, stamp)[0].info
        except InvalidResults as err:
            log.debug("viewer: skipping %s", err)
            info = None
        with self._lock:
            self._infos[path] = (stamp, info)
        return info

    def _read(
        self, run_id: str, path: Path, stamp: tuple[int, int]
    ) -> tuple[RunDetail, list[CaseResult]]:
        with self._lock:
            cached = self._full.get(path)
            if cached is not None and cached[0] == stamp:
                self._full.move_to_end(path)
                return cached[1]
        loaded = read_results_file(path, run_id)
        with self._lock:
            self._full[path] = (stamp, loaded)
            while len(self._full) > self._cached_runs:
                self._full.popitem(last=False)
        return loaded

    def _load(self, run_id: str) -> tuple[RunDetail, list[CaseResult]]:
        path = self._paths().get(run_id)
        if path is None:
            raise RunNotFound(run_id)
        try:
            return self._read(run_id, path, self._stamp(path))
        except (InvalidResults, OSError):
            raise RunNotFound(run_id) from None
