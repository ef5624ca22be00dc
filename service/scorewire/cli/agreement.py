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
import math
from typing import Any

from rich.console import Console
from scorewire.checks.levels import level_scale
from scorewire.cli.agreement_inputs import read_inputs
from scorewire.cli.agreement_output import (
    AGREEMENT_FORMAT,
    CALIBRATION_FORMAT,
    agreement_json,
    calibration_json,
    print_agreement,
    print_calibration,
    write_json,
)
from scorewire.cli.agreement_recorded import is_run_id, recorded_agreements, recorded_calibrations
from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, UsageError
from scorewire.labels.figures import (
    DEFAULT_CONFIDENCE,
    DEFAULT_MAX_DISAGREEMENTS,
    DEFAULT_RESAMPLES,
    JudgedOutput,
    NoPairs,
    agreement,
    calibrate,
    pair_up,
)
from scorewire.labels.label_model import DEFAULT_CHECK


def run_agreement(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """`scorewire agreement`: the figures per judge-backed check."""
    console = console or Console(stderr=args.json == "-")
    err = Console(stderr=True)
    try:
        reports = []
        if is_run_id(args.results):
            for name, ctype, judge, a in recorded_agreements(args):
                reports.append(agreement_json(name, ctype, a, judge))
                print_agreement(console, name, ctype, a, judge)
            checks: list[tuple[str, str, list[JudgedOutput]]] = []
        else:
            checks, lookup = read_inputs(args)
        for name, ctype, judged in checks:
            a = agreement(
                pair_up(judged, lookup, keep=args.max_disagreements),
                resamples=args.resamples,
                seed=args.seed,
                confidence=args.confidence,
                max_disagreements=args.max_disagreements,
            )
            reports.append(agreement_json(name, ctype, a))
            print_agreement(console, name, ctype, a)
    except (UsageError, NoPairs) as problem:
        err.print(f"scorewire agreement: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    write_json(args.json, {"format": AGREEMENT_FORMAT, "results": args.results, "checks": reports})
    return EXIT_PASSED


def run_calibrate(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """`scorewire calibrate`: agreement at each threshold, and the recommended one."""
    console = console or Console(stderr=args.json == "-")
    err = Console(stderr=True)
    try:
        reports = []
        if is_run_id(args.results):
            for name, ctype, judge, cal in recorded_calibrations(args):
                reports.append(calibration_json(name, ctype, cal, judge))
                print_calibration(console, name, ctype, cal, judge)
            checks: list[tuple[str, str, list[JudgedOutput]]] = []
        else:
            checks, lookup = read_inputs(args)
        for name, ctype, judged in checks:
            # A results file holds no parameters: a fixed-scale check's levels are known,
            # a `judge` check's `scale` only when --scale gives it.
            scale = level_scale(ctype, None if args.scale is None else {"scale": args.scale})
            c = calibrate(pair_up(judged, lookup), args.thresholds, scale)
            reports.append(calibration_json(name, ctype, c))
            print_calibration(console, name, ctype, c)
    except (UsageError, NoPairs) as problem:
        err.print(f"scorewire calibrate: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    write_json(
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


def _levels(text: str) -> int:
    value = int(text)
    if not 2 <= value <= 100:
        raise argparse.ArgumentTypeError("must be 2 to 100 levels")
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
    cal.add_argument(
        "--scale",
        type=_levels,
        help="levels of the `judge` checks' scale, to propose their pass_level from a "
        "results file (which holds no parameters; fixed-scale checks need none, and a "
        "recorded run's server reads it from the run)",
    )
    cal.set_defaults(func=run_calibrate)
