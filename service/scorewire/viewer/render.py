"""The viewer's pages as HTML: Jinja templates with autoescaping, CSS and JS inlined.

Everything a page shows from a run is escaped (outputs may hold `<script>`): summaries by
the templates' autoescaping, cases and changes by going into the page as a JSON block
that the page's script draws with `textContent` only, a page of rows at a time (a
20,000-case report opens in under a second). The only script a page runs is the
viewer's own, allowed by a per-page nonce in its Content-Security-Policy, which also
forbids fetching anything (`default-src 'none'`).
`served=True` pages link to the served viewer's URLs and filter on the server (the text
search also in the page, as one types); the offline report links within itself and
filters in the page.
"""

from __future__ import annotations

import functools
import json
import math
import secrets
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup
from scorewire.core.money import usd
from scorewire.labels.label_model import Label
from scorewire.viewer.agreement_view import CheckAgreement
from scorewire.viewer.diffs import PAGE_BUDGET_S, DiffOp, word_diff
from scorewire.viewer.run_views import Matrix, assertion_stats, prompt_matrix
from scorewire.viewer.trends import pass_rate_trends
from scorewire.viewer.view_model import (
    OUTCOMES,
    CaseChange,
    CaseResult,
    CheckStats,
    Comparison,
    RunDetail,
    RunInfo,
    ScoreResult,
    Spread,
)

FAILING = "failing"
"""The outcome filter meaning failed or errored: what a run page shows first."""
OUTCOME_FILTERS = (FAILING, *OUTCOMES, "all")
"""The outcome filter's choices."""

_TEMPLATES = Path(__file__).parent / "templates"


def csp(nonce: str, *, header: bool = False) -> str:
    """The Content-Security-Policy of a page whose one script carries `nonce`: nothing is
    fetched, only that script runs. `header`: the served header's version, which adds
    what a <meta> policy cannot carry (frame-ancestors)."""
    policy = (
        "default-src 'none'; "
        f"script-src 'nonce-{nonce}'; "
        "style-src 'unsafe-inline'; "
        "img-src data:; "
        "form-action 'self'; "
        "base-uri 'none'"
    )
    return policy + "; frame-ancestors 'none'" if header else policy


def search_text(case: CaseResult) -> str:
    """What the text search looks in, lower-cased: the case's input, expected answer and
    output, and every score's reason and error (the page's script joins the same fields)."""
    parts = [_text(case.input), _text(case.expected), case.output or ""]
    if case.generation_error is not None:
        parts.append(case.generation_error[1])
    for s in case.scores:
        parts.append(s.reason)
        if s.error is not None:
            parts.append(s.error[1])
    return "\n".join(parts).lower()


def matches(case: CaseResult, check: str | None, outcome: str, query: str = "") -> bool:
    """Whether a case passes the run page's filter (`failing` = failed or errored, `all`)
    and holds `query` (case-insensitive) in what `search_text` searches."""
    if query and query.lower() not in search_text(case):
        return False
    if outcome == "all":
        return case.has(check, None)
    if outcome == FAILING:
        return case.has(check, "failed") or case.has(check, "errored")
    return case.has(check, outcome)  # type: ignore[arg-type]


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, indent=2, default=str)


def _pct(x: float | None) -> str:
    return "–" if x is None or not math.isfinite(x) else f"{x * 100:.1f}%"


def _delta(x: float | None) -> str:
    if x is None or not math.isfinite(x):
        return "–"
    return f"{x * 100:+.1f} pt"


def _money(x: float | None) -> str:
    return "–" if x is None else usd(x)


def _time(t: datetime | None) -> str:
    return "" if t is None else t.strftime("%Y-%m-%d %H:%M:%S UTC")


def _case_json(case: CaseResult) -> dict[str, Any]:
    return {
        "id": case.sample_id or f"#{case.index}",
        "index": case.index,
        "outcome": case.outcome,
        "description": case.description,
        "provider": case.provider,
        "prompt": case.prompt,
        "input": _text(case.input),
        "expected": _text(case.expected),
        "output": case.output,
        "generation_error": case.generation_error,
        "cost": _money(case.cost_usd) if case.cost_usd else None,
        "latency": _ms(case.latency_ms),
        "scores": [
            [
                s.name,
                s.type,
                None if s.value is None or not math.isfinite(s.value) else s.value,
                s.outcome,
                s.reason,
                s.error,
                None if s.spread is None else _spread_text(s.spread),
                s.spread is not None or s.type in judge_types(),
                _judged_by(s),
            ]
            for s in case.scores
        ],
    }


def _judged_by(s: ScoreResult) -> str | None:
    """Who judged a score, as recorded: the judges asked, the models their providers
    reported answering, and the judge prompts' version; None for a score no judge gave."""
    if not s.judges:
        return None
    text = "judged by " + ", ".join(s.judges)
    if s.reported_models:
        text += " (answered as " + ", ".join(s.reported_models) + ")"
    return text + (f" · prompt {s.prompt_version}" if s.prompt_version else "")


@functools.cache
def judge_types() -> frozenset[str]:
    """The check types that ask a model (and their other spellings): a passing score of
    one shows its reason, the judge's reasoning, one click away. Looked up once, on the
    first page drawn, so that importing the viewer does not load every check."""
    import scorewire.checks  # noqa: F401  (registers the check types)
    from scorewire.core.registry import REGISTRY

    judged = [t for t in [*REGISTRY.types(), *REGISTRY.alias_types()] if t.uses_judge]
    return frozenset(name for t in judged for name in (t.name, *t.aliases))


def _ms(x: float | None) -> str | None:
    if x is None or not math.isfinite(x):
        return None
    return f"{x:.0f} ms" if x < 10_000 else f"{x / 1000:.1f} s"


def _spread_text(spread: Spread) -> str:
    values = ", ".join(f"{v:g}" for v in spread.values)
    text = f"{spread.samples} samples, {spread.agreement * 100:.0f}% agree"
    return f"{text} ({values})" if values else text


def _change_json(change: CaseChange, *, diff: bool = True) -> dict[str, Any]:
    either = change.case or change.base
    return {
        "kind": change.kind,
        "key": change.key,
        "was": None if change.base is None else change.base.outcome,
        "now": None if change.case is None else change.case.outcome,
        "description": either.description if either is not None else "",
        "base": None if change.base is None else {"output": change.base.output},
        "case": None if change.case is None else _case_json(change.case),
        "diff": _diff(change) if diff else None,
    }


def _diff(change: CaseChange) -> list[tuple[DiffOp, str]] | None:
    """The word diff of a matched case whose output changed (None otherwise)."""
    if change.base is None or change.case is None:
        return None
    before, after = change.base.output, change.case.output
    if before is None or after is None or before == after:
        return None
    return word_diff(before, after)


def cases_json(cases: Sequence[CaseResult]) -> Markup:
    """The cases as JSON for a `<script type="application/json">` block, which the page's
    script draws with textContent (so nothing in them is ever parsed as HTML)."""
    return _script_json([_case_json(c) for c in cases])


def changes_json(changes: Sequence[CaseChange]) -> Markup:
    """A comparison's changes as JSON for the page's script (see `cases_json`)."""
    deadline = time.monotonic() + PAGE_BUDGET_S
    return _script_json([_change_json(c, diff=time.monotonic() < deadline) for c in changes])


def _script_json(value: Any) -> Markup:
    """JSON safe inside a <script> block: `<`, `>` and `&` are escaped as \\u sequences,
    so no `</script>` or `<!--` in a value can end or change the block."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escape)
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Markup(text)


def _json_attr(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(frozen=True, slots=True)
class Links:
    """Where a page's links go: the served viewer's URLs, or anchors within one file."""

    served: bool
    main: str = ""
    """Offline: the run the file shows in full (others are shown in its compare section)."""

    def run(self, run_id: str) -> str:
        """The run page of `run_id`."""
        if self.served:
            return f"/runs/{quote(run_id, safe='/')}"
        return f"#run-{quote(run_id)}" if run_id == self.main else "#compare"

    def runs(self) -> str:
        """The runs list."""
        return "/" if self.served else "#runs"

    def export(
        self, run_id: str, fmt: str, check: str | None, outcome: str, query: str = ""
    ) -> str:
        """The served download of a run's cases under a filter, as `fmt` (csv or json)."""
        params = {"run": run_id, "format": fmt, "check": check or "", "outcome": outcome}
        if query:
            params["q"] = query
        return "/export?" + urlencode(params)

    def compare(self, base: str, run: str) -> str:
        """The compare page of two runs."""
        if self.served:
            return "/compare?" + urlencode({"base": base, "run": run})
        return "#compare"


def _environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(_TEMPLATES),
        autoescape=select_autoescape(["html"], default=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(
        text=_text,
        pct=_pct,
        delta=_delta,
        money=_money,
        time=_time,
        js=_json_attr,
        ms=_ms,
        cases_json=cases_json,
        changes_json=changes_json,
    )
    env.globals.update(
        outcome_filters=OUTCOME_FILTERS, FAILING=FAILING, pass_rate_trends=pass_rate_trends
    )
    return env


_ENV = _environment()


def _page(
    template: str,
    *,
    title: str,
    nonce: str | None = None,
    csrf: str | None = None,
    **context: Any,
) -> str:
    """`csrf`: the signed-in session's CSRF token, which the page's forms that change
    something carry (the header's sign-out form); None draws no such form."""
    nonce = nonce or secrets.token_urlsafe(16)
    context.setdefault("review_csrf", None)
    context.setdefault("reviewed", None)
    return _ENV.get_template(template).render(
        title=title, nonce=nonce, csp=csp(nonce), csrf=csrf, **context
    )


def render_runs(
    runs: Sequence[RunInfo], *, nonce: str | None = None, csrf: str | None = None
) -> str:
    """The served runs list."""
    return _page(
        "runs.html", title="scorewire runs", nonce=nonce, csrf=csrf, runs=runs, links=Links(True)
    )


def render_run(
    detail: RunDetail,
    cases: Sequence[CaseResult],
    *,
    check: str | None = None,
    outcome: str = FAILING,
    query: str = "",
    review_csrf: str | None = None,
    truncated_from: int | None = None,
    matrix: Matrix | None = None,
    assertions: Sequence[CheckStats] | None = None,
    nonce: str | None = None,
    csrf: str | None = None,
    reviewed: Mapping[int, Sequence[Label]] | None = None,
) -> str:
    """The served run page: `cases` are those the filter selected (at most a page's
    worth: `truncated_from` is how many matched when they were cut); `assertions` the
    checks table's rows (`run_views.assertion_stats` of every case; default the summary's);
    `review_csrf`: each case offers a pass/fail and note form (`POST /review`, this CSRF
    token in it: the session's, or the pre-session cookie's for the one local user);
    `reviewed`: the labels on the shown cases' outputs (each labeller's latest), by case
    index, listed under each case."""
    return _page(
        "run.html",
        title=f"{detail.info.name} · scorewire",
        nonce=nonce,
        csrf=csrf,
        links=Links(True),
        run=detail,
        assertions=detail.checks if assertions is None else assertions,
        cases=cases,
        matrix=matrix,
        check=check,
        outcome=outcome,
        query=query,
        review_csrf=review_csrf,
        truncated_from=truncated_from,
        reviewed=_script_json(
            {
                str(i): [[lb.labeller, lb.passed, lb.note] for lb in labels]
                for i, labels in (reviewed or {}).items()
            }
        ),
    )


def render_agreement(
    detail: RunDetail,
    figures: Sequence[CheckAgreement],
    *,
    nonce: str | None = None,
    csrf: str | None = None,
) -> str:
    """The served agreement page of a run: each judge-backed check against its labels."""
    return _page(
        "agreement.html",
        title=f"{detail.info.name} agreement · scorewire",
        nonce=nonce,
        csrf=csrf,
        links=Links(True),
        run=detail,
        figures=figures,
    )


def render_queue(
    detail: RunDetail,
    queue: Sequence[CaseResult],
    *,
    nonce: str | None = None,
    csrf: str | None = None,
) -> str:
    """The served reviewer queue of a run: its first unlabelled output, with the review
    form (`POST /review`, back to the queue), and how many wait."""
    return _page(
        "queue.html",
        title=f"{detail.info.name} review queue · scorewire",
        nonce=nonce,
        csrf=csrf,
        links=Links(True),
        run=detail,
        case=queue[0] if queue else None,
        waiting=len(queue),
    )


def render_compare(
    comparison: Comparison, *, nonce: str | None = None, csrf: str | None = None
) -> str:
    """The served compare page."""
    return _page(
        "compare.html",
        title=f"{comparison.run.info.name} vs {comparison.base.info.name} · scorewire",
        nonce=nonce,
        csrf=csrf,
        links=Links(True),
        cmp=comparison,
    )


def render_report(
    detail: RunDetail,
    cases: Sequence[CaseResult],
    *,
    comparison: Comparison | None = None,
    base_cases: Sequence[CaseResult] = (),
) -> str:
    """The offline report: one self-contained file with the runs list, the run page (every
    case, filtered in the page), the prompt × provider matrix and the compare page."""
    runs = [detail.info] if comparison is None else [detail.info, comparison.base.info]
    return _page(
        "report.html",
        title=f"{detail.info.name} · scorewire report",
        links=Links(False, detail.info.id),
        runs=runs,
        run=detail,
        assertions=assertion_stats(detail.checks, cases),
        cases=cases,
        matrix=prompt_matrix(cases),
        check=None,
        outcome=FAILING,
        truncated_from=None,
        cmp=comparison,
    )


def render_message(
    title: str,
    message: str,
    *,
    login: str | None = None,
    login_csrf: str = "",
    nonce: str | None = None,
) -> str:
    """A short page for errors (not found, bad request) and the sign-in form (`login` is
    the path to return to, `login_csrf` the browser's pre-session CSRF token)."""
    return _page(
        "message.html",
        title=title,
        nonce=nonce,
        message=message,
        login=login,
        login_csrf=login_csrf,
        links=Links(True),
    )
