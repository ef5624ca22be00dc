"""What `scorewire agreement` and `scorewire calibrate` show and write: the figures of each
check as tables, and as JSON (`--json`)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from scorewire.labels.figures import Agreement, Calibration, CalibrationPoint, Confusion, Pair

AGREEMENT_FORMAT = "scorewire.agreement/1"
CALIBRATION_FORMAT = "scorewire.calibration/1"


def confusion_json(c: Confusion) -> dict[str, int]:
    """The JSON of a confusion matrix."""
    return {
        "judge_pass_human_pass": c.pass_pass,
        "judge_pass_human_fail": c.pass_fail,
        "judge_fail_human_pass": c.fail_pass,
        "judge_fail_human_fail": c.fail_fail,
    }


def _pair_json(p: Pair) -> dict[str, Any]:
    return {
        "sample_id": p.sample_id,
        "output": p.output,
        "judge_passed": p.judge_passed,
        "judge_value": p.judge_value,
        "judge_reason": p.judge_reason,
        "human_passed": p.human_passed,
        "human_note": p.human_note,
        "confidence": p.confidence,
    }


def agreement_json(name: str, ctype: str, a: Agreement, judge: str = "") -> dict[str, Any]:
    """The JSON of one check's agreement (`judge`: its judge configuration, when known)."""
    return {
        "name": name,
        "type": ctype,
        "judge": judge or None,
        "pairs": a.pairs,
        "accuracy": a.accuracy,
        "f1": a.f1,
        "base_rate": a.base_rate,
        "kappa": a.kappa,
        "kappa_band": a.band,
        "kappa_interval": None if a.interval is None else list(a.interval),
        "confidence": a.confidence,
        "resamples": a.resamples,
        "confusion": confusion_json(a.confusion),
        "unlabelled": a.unlabelled,
        "errored": a.errored,
        "cost_usd": a.cost_usd,
        # the values against the verdicts; a correlation is null when undefined
        "pearson": None if a.numeric is None else a.numeric.pearson,
        "spearman": None if a.numeric is None else a.numeric.spearman,
        "mae": None if a.numeric is None else a.numeric.mae,
        "disagreements": [_pair_json(p) for p in a.disagreements],
    }


def _point_json(p: CalibrationPoint) -> dict[str, Any]:
    return {
        "threshold": p.threshold,
        "accuracy": p.accuracy,
        "kappa": p.kappa,
        "confusion": confusion_json(p.confusion),
    }


def calibration_json(name: str, ctype: str, c: Calibration, judge: str = "") -> dict[str, Any]:
    """The JSON of one check's calibration (`judge`: its judge configuration, when known)."""
    return {
        "name": name,
        "type": ctype,
        "judge": judge or None,
        "pairs": c.pairs,
        "points": [_point_json(p) for p in c.points],
        "recommended_threshold": c.recommended.threshold,
        "recommended_kappa": c.recommended.kappa,
        "scale": c.scale,
        "recommended_pass_level": c.pass_level,
        "pass_level_point": None if c.pass_level_point is None else _point_json(c.pass_level_point),
        "cost_usd": c.cost_usd,
        "cost_per_pair_usd": c.cost_per_pair_usd,
    }


def _kappa_text(kappa: float | None) -> str:
    return "undefined (one verdict for every pair)" if kappa is None else f"{kappa:.3f}"


def _correlation(r: float | None) -> str:
    return "undefined" if r is None else f"{r:.3f}"


def _numeric_text(a: Agreement) -> str:
    """The value-against-verdict figures and kappa's band, as one line."""
    band = f"kappa band {a.band} (Landis–Koch)"
    n = a.numeric
    if n is None:
        return band
    undefined = (
        " (a correlation is undefined below 2 pairs or when a side never varies)"
        if n.pearson is None or n.spearman is None
        else ""
    )
    return (
        f"{band}; judge values against people's verdicts (pass 1, fail 0): Pearson r "
        f"{_correlation(n.pearson)}, Spearman rho {_correlation(n.spearman)}, MAE "
        f"{n.mae:.3f}{undefined}"
    )


def _judged_by(judge: str) -> str:
    return f", judged by {escape(judge)}" if judge else ""


def print_agreement(console: Console, name: str, ctype: str, a: Agreement, judge: str = "") -> None:
    """One check's agreement: the figures beside the base rate and the judge's cost,
    kappa's band and the values' correlation with the verdicts, the confusion matrix and
    the disagreements."""
    interval = (
        f" [{a.interval[0]:.3f}, {a.interval[1]:.3f}] at {a.confidence:.0%}"
        if a.interval is not None
        else ""
    )
    f1 = "undefined (no pass on either side)" if a.f1 is None else f"{a.f1:.3f}"
    console.print(
        f"[bold]{escape(name)}[/bold] ({ctype}{_judged_by(judge)}): {a.pairs} pairs, "
        f"kappa {_kappa_text(a.kappa)}{interval}, accuracy {a.accuracy:.1%}, F1 {f1}; "
        f"people passed {a.base_rate:.1%} (base rate); judge cost ${a.cost_usd:.6f}",
        highlight=False,
    )
    console.print(f"  {_numeric_text(a)}", highlight=False)
    skipped = []
    if a.unlabelled:
        skipped.append(f"{a.unlabelled} unlabelled")
    if a.errored:
        skipped.append(f"{a.errored} errored")
    if skipped:
        console.print(f"  not paired: {', '.join(skipped)}", highlight=False)
    matrix = Table("", "human pass", "human fail", title="judge × human", title_justify="left")
    c = a.confusion
    matrix.add_row("judge pass", str(c.pass_pass), str(c.pass_fail))
    matrix.add_row("judge fail", str(c.fail_pass), str(c.fail_fail))
    console.print(matrix)
    if a.disagreements:
        table = Table("sample", "judge", "people", "confidence", "judge reason", "human note")
        for p in a.disagreements:
            table.add_row(
                p.sample_id,
                f"{'pass' if p.judge_passed else 'fail'} {p.judge_value:.2f}",
                "pass" if p.human_passed else "fail",
                f"{p.confidence:.2f}",
                p.judge_reason,
                p.human_note,
            )
        console.print(table)


def print_calibration(
    console: Console, name: str, ctype: str, c: Calibration, judge: str = ""
) -> None:
    """One check's calibration: the agreement at each threshold, the recommended one and,
    for a level judge, the recommended pass level."""
    console.print(
        f"[bold]{escape(name)}[/bold] ({ctype}{_judged_by(judge)}): {c.pairs} pairs",
        highlight=False,
    )
    table = Table(
        "threshold", "accuracy", "kappa", "judge pass/human fail", "judge fail/human pass"
    )
    for p in c.points:
        mark = " ← recommended" if p is c.recommended else ""
        table.add_row(
            f"{p.threshold:.3g}{mark}",
            f"{p.accuracy:.1%}",
            _kappa_text(p.kappa),
            str(p.confusion.pass_fail),
            str(p.confusion.fail_pass),
        )
    console.print(table)
    console.print(
        f"  recommended threshold {c.recommended.threshold:.3g} "
        f"(kappa {_kappa_text(c.recommended.kappa)}); judge cost ${c.cost_usd:.6f}, "
        f"${c.cost_per_pair_usd:.6f} per labelled pair",
        highlight=False,
    )
    if c.pass_level is not None and c.pass_level_point is not None:
        console.print(
            f"  recommended pass_level {c.pass_level} of {c.scale} "
            f"(bar {c.pass_level_point.threshold:.3g}, kappa "
            f"{_kappa_text(c.pass_level_point.kappa)}, accuracy "
            f"{c.pass_level_point.accuracy:.1%})",
            highlight=False,
        )


def write_json(path: str | None, doc: dict[str, Any]) -> None:
    """Write `doc` to `path` (`-`: stdout; None: nowhere)."""
    if path is None:
        return
    text = json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False)
    if path == "-":
        sys.stdout.write(text + "\n")
    else:
        Path(path).write_text(text + "\n", encoding="utf-8")
