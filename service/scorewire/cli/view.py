"""`scorewire view RESULTS.json --output report.html [--compare BASE.json]`.

Writes the viewer's pages for one run as a single self-contained HTML file: the runs
list, the run page (checks, gate, cost, the prompt × provider matrix of a checkllm
run, every case with a filter that works in the page), and with `--compare` the
compare page against a base run. Nothing in it is fetched: it opens from a file, a CI
artifact or an e-mail. Exit 0 when written, 2 for a file that cannot be read or written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE
from scorewire.viewer import InvalidResults, ResultsFile
from scorewire.viewer.render import render_report


def cmd_view(args: argparse.Namespace) -> int:
    """`scorewire view`."""
    paths = [Path(args.results), *([Path(args.compare)] if args.compare else [])]
    try:
        source = ResultsFile(*paths)
    except InvalidResults as problem:
        print(f"scorewire view: {problem}", file=sys.stderr)
        return EXIT_USAGE
    run_id = source.ids[0]
    detail = source.get_run(run_id)
    cases = source.results(run_id)
    comparison = source.compare(source.ids[1], run_id) if args.compare else None
    html = render_report(detail, cases, comparison=comparison)
    target = Path(args.output)
    try:
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(html, encoding="utf-8")
        tmp.replace(target)
    except OSError as problem:
        print(f"scorewire view: cannot write {target}: {problem.strerror}", file=sys.stderr)
        return EXIT_USAGE
    print(f"scorewire view: wrote {target} ({len(cases)} cases)", file=sys.stderr)
    return EXIT_PASSED


def add_view_parser(subparsers: Any) -> None:
    """Add `view` to the `scorewire` parser's subparsers."""
    view = subparsers.add_parser(
        "view",
        help="write a run's results as one self-contained HTML report",
        description="Render a results JSON of `scorewire run --output` as one HTML file "
        "that needs no server: the run's checks, gate, cost, failing cases and, with "
        "--compare, what changed since a base run (regressions first).",
    )
    view.add_argument("results", metavar="RESULTS.json", help="the run to show")
    view.add_argument(
        "--output", "-o", required=True, metavar="REPORT.html", help="the HTML file to write"
    )
    view.add_argument(
        "--compare", metavar="BASE.json", help="a base run's results: show what changed since"
    )
    view.set_defaults(func=cmd_view)
