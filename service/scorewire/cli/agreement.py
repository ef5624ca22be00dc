"""`scorewire agreement` and `scorewire calibrate`: how far a judge agrees with people.

    scorewire agreement results.json --labels labels.jsonl [--check NAME] [--json OUT]
    scorewire agreement results.json --server HOST:PORT [--label-check tone]
    scorewire calibrate results.json --labels labels.jsonl [--thresholds 0.5,0.75]
    scorewire agreement RUN_ID --server HOST:PORT [--check NAME]


Both read a results JSON of `scorewire run --output` (the judge's scores of each case,
with the exact outputs) and human labels: a labels JSONL of `scorewire label`, or the
label store of a scorewire server (ListLabels). A pair is a scored output that has a
label for the same sample id and exact output text. `agreement` prints, per judge-backed
check (or the one `--check` names): pairs, accuracy, Cohen's kappa with its bootstrap
interval, the confusion matrix and the most confident disagreements. `calibrate`
re-decides the same verdicts at each threshold (from the values already in the file, so
no judge is called), shows the agreement at each and recommends the highest kappa, with
the judge's cost per labelled pair.

With a recorded run's id (`run_` and 20 hex digits, not the name of an existing file) in
place of the results file, and `--server`, the server does the work: LabelService's
Agreement (or Calibrate) reads the run's recorded judge verdicts (no judge call) and
pairs them with its label store; the figures are printed and written the same way.

Exit codes: 0 with the figures printed (and written with `--json`); 2 for a usage error,
an unreadable file, a check that is not judge-backed, or zero pairs (agreement on nothing
is an error, never a kappa of 0).
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, UsageError
from scorewire.core.model import Score, ScoreError, Spread
from scorewire.core.registry import REGISTRY
from scorewire.labels.agreement import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_DISAGREEMENTS,
    DEFAULT_RESAMPLES,
    Agreement,
    Calibration,
    CalibrationPoint,
    Confusion,
    JudgedOutput,
    NoPairs,
    Pair,
    agreement,
    calibrate,
    pair_up,
)
from scorewire.labels.jsonl import LabelFileError, LabelIndex, read_labels
from scorewire.labels.model import DEFAULT_CHECK, Label, labelled_text

AGREEMENT_FORMAT = "scorewire.agreement/1"
CALIBRATION_FORMAT = "scorewire.calibration/1"


# --- reading ------------------------------------------------------------------------------


def _score(raw: dict[str, Any]) -> Score:
    error = raw.get("error")
    value = raw.get("value")
    spread = raw.get("spread")
    score = Score(
        float(value) if isinstance(value, int | float) else 0.0,
        bool(raw.get("passed")),
        str(raw.get("reason") or ""),
        cost_usd=float(raw.get("cost_usd") or 0.0),
        cached=bool(raw.get("cached")),
        error=ScoreError(str(error.get("code")), str(error.get("message")))
        if isinstance(error, dict)
        else None,
    )
    if isinstance(spread, dict) and score.error is None:
        values = tuple(float(v) for v in spread.get("values") or ())
        if values:
            score.spread = Spread(values, float(spread.get("agreement") or 0.0))
    return score


def read_results(path: str) -> list[dict[str, Any]]:
    """The `results` of a results JSON; UsageError when it is not one."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror}") from None
    except ValueError as err:
        raise UsageError(f"{path} is not JSON: {err}") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list):
        raise UsageError(
            f'{path} is not a results JSON of `scorewire run --output` (no "results" list)'
        )
    return [r for r in doc["results"] if isinstance(r, dict)]


def judge_checks(results: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """(name, type) of every judge-backed check in the results, in first-seen order."""
    import scorewire.checks  # noqa: F401  # registers the built-in check types

    seen: dict[str, str] = {}
    for r in results:
        for s in r.get("scores") or ():
            name, ctype = str(s.get("name")), str(s.get("type"))
            check_type = REGISTRY.get(ctype)
            if name not in seen and check_type is not None and check_type.uses_judge:
                seen[name] = ctype
    return list(seen.items())


def judged_outputs(results: Iterable[dict[str, Any]], check: str) -> list[JudgedOutput]:
    """One check's scores of every case that has an output."""
    out = []
    for r in results:
        if r.get("output") is None:
            continue
        text = labelled_text(str(r.get("output") or ""), r.get("output_value"))
        for s in r.get("scores") or ():
            if s.get("name") == check:
                out.append(JudgedOutput(str(r.get("sample_id") or ""), text, _score(s)))
                break
    return out


def labels_from_server(address: str, check: str, tenant: str, labeller: str) -> list[Label]:
    """Every counting label of one label check in a scorewire server (ListLabels pages)."""
    import grpc
    from scorewire.v1 import labels_pb2, labels_pb2_grpc

    channel = grpc.insecure_channel(address)
    stub = labels_pb2_grpc.LabelServiceStub(channel)
    labels: list[Label] = []
    token = ""
    try:
        while True:
            page = stub.ListLabels(
                labels_pb2.ListLabelsRequest(
                    check=check,
                    tenant=tenant,
                    labeller=labeller,
                    page_size=1000,
                    page_token=token,
                ),
                timeout=30.0,
            )
            for m in page.labels:
                labels.append(
                    Label(
                        sample_id=m.sample_id,
                        output_hash=m.output_hash,
                        passed=m.passed,
                        labeller=m.labeller,
                        created_at=m.created_at.ToDatetime(tzinfo=UTC),
                        check=m.check,
                        note=m.note,
                        tenant=m.tenant,
                    )
                )
            token = page.next_page_token
            if not token:
                return labels
    except grpc.RpcError as err:
        raise UsageError(
            f"cannot list labels from {address}: {err.code().name}: {err.details()}"
        ) from None
    finally:
        channel.close()


def _lookup(labels: Sequence[Label], check: str) -> Callable[[str, str], Sequence[Label]]:
    index = LabelIndex.build(lb for lb in labels if lb.check == check)
    return lambda sample_id, digest: index.lookup(sample_id, digest, check)


# --- JSON -------------------------------------------------------------------------------------


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


def agreement_json(name: str, ctype: str, a: Agreement) -> dict[str, Any]:
    """The JSON of one check's agreement."""
    return {
        "name": name,
        "type": ctype,
        "pairs": a.pairs,
        "accuracy": a.accuracy,
        "kappa": a.kappa,
        "kappa_interval": None if a.interval is None else list(a.interval),
        "confidence": a.confidence,
        "resamples": a.resamples,
        "confusion": confusion_json(a.confusion),
        "unlabelled": a.unlabelled,
        "errored": a.errored,
        "cost_usd": a.cost_usd,
        "disagreements": [_pair_json(p) for p in a.disagreements],
    }


def calibration_json(name: str, ctype: str, c: Calibration) -> dict[str, Any]:
    """The JSON of one check's calibration."""
    return {
        "name": name,
        "type": ctype,
        "pairs": c.pairs,
        "points": [
            {
                "threshold": p.threshold,
                "accuracy": p.accuracy,
                "kappa": p.kappa,
                "confusion": confusion_json(p.confusion),
            }
            for p in c.points
        ],
        "recommended_threshold": c.recommended.threshold,
        "recommended_kappa": c.recommended.kappa,
        "cost_usd": c.cost_usd,
        "cost_per_pair_usd": c.cost_per_pair_usd,
    }


# --- printing ----------------------------------------------------------------------------------


def _kappa_text(kappa: float | None) -> str:
    return "undefined (one verdict for every pair)" if kappa is None else f"{kappa:.3f}"


def _print_agreement(console: Console, name: str, ctype: str, a: Agreement) -> None:
    interval = (
        f" [{a.interval[0]:.3f}, {a.interval[1]:.3f}] at {a.confidence:.0%}"
        if a.interval is not None
        else ""
    )
    console.print(
        f"[bold]{name}[/bold] ({ctype}): {a.pairs} pairs, accuracy {a.accuracy:.1%}, "
        f"kappa {_kappa_text(a.kappa)}{interval}",
        highlight=False,
    )
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


def _print_calibration(console: Console, name: str, ctype: str, c: Calibration) -> None:
    console.print(f"[bold]{name}[/bold] ({ctype}): {c.pairs} pairs", highlight=False)
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


# --- the commands ------------------------------------------------------------------------------


def _inputs(args: argparse.Namespace) -> tuple[list[tuple[str, str, list[JudgedOutput]]], Any]:
    results = read_results(args.results)
    checks = judge_checks(results)
    if args.check is not None:
        chosen = [c for c in checks if c[0] == args.check]
        if not chosen:
            names = ", ".join(n for n, _ in checks) or "none"
            raise UsageError(
                f"--check {args.check!r} is not a judge-backed check of {args.results} "
                f"(judge-backed checks there: {names})"
            )
        checks = chosen
    if not checks:
        raise UsageError(f"{args.results} has no judge-backed check to compare")
    if args.labels is not None:
        try:
            labels = read_labels(args.labels)
        except LabelFileError as err:
            raise UsageError(str(err)) from None
    else:
        labels = labels_from_server(args.server, args.label_check, args.tenant, args.labeller)
    lookup = _lookup(labels, args.label_check)
    return [(n, t, judged_outputs(results, n)) for n, t in checks], lookup


_RUN_ID = re.compile(r"run_[0-9a-f]{20}")


def is_run_id(text: str) -> bool:
    """Whether the RESULTS argument names a recorded run: a run id, and no such file."""
    return _RUN_ID.fullmatch(text) is not None and not Path(text).exists()


def _confusion_from_pb(m: Any) -> Confusion:
    return Confusion(
        m.judge_pass_human_pass,
        m.judge_pass_human_fail,
        m.judge_fail_human_pass,
        m.judge_fail_human_fail,
    )


def _agreement_from_pb(m: Any) -> Agreement:
    return Agreement(
        pairs=m.pairs,
        accuracy=m.accuracy,
        kappa=m.kappa if m.HasField("kappa") else None,
        interval=(m.kappa_low, m.kappa_high) if m.HasField("kappa") else None,
        confidence=m.confidence,
        resamples=m.resamples,
        confusion=_confusion_from_pb(m.confusion),
        disagreements=[
            Pair(
                sample_id=d.sample_id,
                output=d.output,
                judge_passed=d.judge_passed,
                judge_value=d.judge_value,
                judge_reason=d.judge_reason,
                confidence=d.confidence,
                human_passed=d.human_passed,
                human_note=d.human_note,
            )
            for d in m.disagreements
        ],
        unlabelled=m.unlabelled,
        errored=m.errored,
        cost_usd=m.cost_usd,
    )


def _calibration_from_pb(m: Any) -> Calibration:
    points = [
        CalibrationPoint(
            p.threshold,
            p.accuracy,
            p.kappa if p.HasField("kappa") else None,
            _confusion_from_pb(p.confusion),
        )
        for p in m.points
    ]
    best = next(
        (p for p in points if p.threshold == m.recommended_threshold),
        CalibrationPoint(m.recommended_threshold, 0.0, None, Confusion()),
    )
    return Calibration(m.pairs, points, best, m.cost_usd, m.cost_per_pair_usd)


def _run_request(args: argparse.Namespace) -> Any:
    from scorewire.v1 import labels_pb2

    if args.server is None:
        raise UsageError(f"{args.results} is a run id: give --server, the server that recorded it")
    return labels_pb2.AgreementRequest(
        run_id=args.results,
        check=args.check or "",
        labels=labels_pb2.LabelFilter(
            check=args.label_check, labeller=args.labeller, tenant=args.tenant
        ),
        options=labels_pb2.AgreementOptions(
            resamples=getattr(args, "resamples", 0),
            seed=getattr(args, "seed", 0),
            confidence=getattr(args, "confidence", 0.0),
            max_disagreements=getattr(args, "max_disagreements", 0),
        ),
    )


def _call_server(args: argparse.Namespace, method: str, request: Any) -> Any:
    """One LabelService call to `--server`; UsageError with the status otherwise."""
    import grpc
    from scorewire.v1 import labels_pb2_grpc

    channel = grpc.insecure_channel(args.server)
    try:
        stub = labels_pb2_grpc.LabelServiceStub(channel)
        return getattr(stub, method)(request, timeout=300.0)
    except grpc.RpcError as err:
        raise UsageError(f"{args.server} answered {err.code().name}: {err.details()}") from None
    finally:
        channel.close()


def _run_agreements(args: argparse.Namespace) -> list[tuple[str, str, Agreement]]:
    resp = _call_server(args, "Agreement", _run_request(args))
    return [(c.name, c.type, _agreement_from_pb(c)) for c in resp.checks]


def _run_calibrations(args: argparse.Namespace) -> list[tuple[str, str, Calibration]]:
    from scorewire.v1 import labels_pb2

    request = labels_pb2.CalibrateRequest(
        agreement=_run_request(args), thresholds=args.thresholds or []
    )
    resp = _call_server(args, "Calibrate", request)
    return [(c.name, c.type, _calibration_from_pb(c)) for c in resp.checks]


def _write_json(path: str | None, doc: dict[str, Any]) -> None:
    if path is None:
        return
    text = json.dumps(doc, ensure_ascii=False, indent=2, allow_nan=False)
    if path == "-":
        sys.stdout.write(text + "\n")
    else:
        Path(path).write_text(text + "\n", encoding="utf-8")


def run_agreement(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """`scorewire agreement`: the figures per judge-backed check."""
    console = console or Console(stderr=args.json == "-")
    err = Console(stderr=True)
    try:
        reports = []
        if is_run_id(args.results):
            for name, ctype, a in _run_agreements(args):
                reports.append(agreement_json(name, ctype, a))
                _print_agreement(console, name, ctype, a)
            checks: list[tuple[str, str, list[JudgedOutput]]] = []
        else:
            checks, lookup = _inputs(args)
        for name, ctype, judged in checks:
            a = agreement(
                pair_up(judged, lookup),
                resamples=args.resamples,
                seed=args.seed,
                confidence=args.confidence,
                max_disagreements=args.max_disagreements,
            )
            reports.append(agreement_json(name, ctype, a))
            _print_agreement(console, name, ctype, a)
    except (UsageError, NoPairs) as problem:
        err.print(f"scorewire agreement: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    _write_json(args.json, {"format": AGREEMENT_FORMAT, "results": args.results, "checks": reports})
    return EXIT_PASSED


def run_calibrate(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """`scorewire calibrate`: agreement at each threshold, and the recommended one."""
    console = console or Console(stderr=args.json == "-")
    err = Console(stderr=True)
    try:
        reports = []
        if is_run_id(args.results):
            for name, ctype, cal in _run_calibrations(args):
                reports.append(calibration_json(name, ctype, cal))
                _print_calibration(console, name, ctype, cal)
            checks: list[tuple[str, str, list[JudgedOutput]]] = []
        else:
            checks, lookup = _inputs(args)
        for name, ctype, judged in checks:
            c = calibrate(pair_up(judged, lookup), args.thresholds)
            reports.append(calibration_json(name, ctype, c))
            _print_calibration(console, name, ctype, c)
    except (UsageError, NoPairs) as problem:
        err.print(f"scorewire calibrate: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    _write_json(
        args.json, {"format": CALIBRATION_FORMAT, "results": args.results, "checks": reports}
    )
    return EXIT_PASSED


def _unit(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError("must be strictly between 0 and 1")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _thresholds(text: str) -> list[float]:
    try:
        values = [float(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("must be numbers separated by commas") from None
    if not values or not all(math.isfinite(v) and 0 <= v <= 1 for v in values):
        raise argparse.ArgumentTypeError("must be numbers from 0 to 1 separated by commas")
    return values


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results",
        metavar="RESULTS_JSON",
        help="a results JSON of `scorewire run --output`, or a recorded run's id (--server)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--labels", metavar="LABELS_JSONL", help="a labels file of `scorewire label`"
    )
    source.add_argument(
        "--server", metavar="HOST:PORT", help="read the labels from this scorewire server"
    )
    parser.add_argument("--check", help="only this check (by name); default every judge-backed one")
    parser.add_argument(
        "--label-check",
        default=DEFAULT_CHECK,
        help=f"the label check the labels are for (default {DEFAULT_CHECK})",
    )
    parser.add_argument("--labeller", default="", help="only labels by this labeller (--server)")
    parser.add_argument("--tenant", default="", help="only labels of this tenant (--server)")
    parser.add_argument(
        "--json", metavar="OUT", help="also write the figures as JSON (- for stdout)"
    )


def add_agreement_parsers(subparsers: Any) -> None:
    """Add `agreement` and `calibrate` to the `scorewire` parser's subparsers."""
    agree: argparse.ArgumentParser = subparsers.add_parser(
        "agreement",
        help="how far judge-backed checks agree with human labels",
        description="Pairs, accuracy, Cohen's kappa with a bootstrap interval, the "
        "confusion matrix and the disagreements of each judge-backed check of a results "
        "JSON against human labels of the same sample ids and exact outputs.",
    )
    _common(agree)
    agree.add_argument(
        "--resamples", type=_count, default=DEFAULT_RESAMPLES, help="bootstrap resamples"
    )
    agree.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    agree.add_argument(
        "--confidence",
        type=_unit,
        default=DEFAULT_CONFIDENCE,
        help="confidence level of kappa's interval (default 0.95)",
    )
    agree.add_argument(
        "--max-disagreements",
        type=int,
        default=DEFAULT_MAX_DISAGREEMENTS,
        help=f"disagreements listed per check (default {DEFAULT_MAX_DISAGREEMENTS})",
    )
    agree.set_defaults(func=run_agreement)
    cal: argparse.ArgumentParser = subparsers.add_parser(
        "calibrate",
        help="the threshold at which a judge check agrees best with human labels",
        description="Re-decide each judge-backed check's verdicts at several thresholds "
        "from the values already in the results JSON (no judge calls), show the agreement "
        "with the labels at each, and recommend the one with the highest kappa.",
    )
    _common(cal)
    cal.add_argument(
        "--thresholds",
        type=_thresholds,
        default=[],
        help="candidate thresholds, e.g. 0.5,0.75,1 (default: every value the judge gave)",
    )
    cal.set_defaults(func=run_calibrate)
