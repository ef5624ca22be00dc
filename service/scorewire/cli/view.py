"""`scorewire view`: the viewer served here, or one run written as an HTML report.

`scorewire view [RESULTS.json|DIR] [--server HOST:PORT] [--port N] [--no-open]` serves
the viewer on 127.0.0.1 over this machine's run store, results files or a server's runs
(`scorewire.cli.view_served`).

`scorewire view RESULTS.json --output report.html [--compare BASE.json]` writes the
viewer's pages for one run as a single self-contained HTML file: the runs list, the run
page (checks, gate, cost, the prompt × provider matrix of a checkllm run, every case
with a filter that works in the page), and with `--compare` the compare page against a
base run. Nothing in it is fetched: it opens from a file, a CI artifact or an e-mail.
Exit 0 when written, 2 for a file that cannot be read or written.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, load_settings
from scorewire.cli.run_output import stderr_console
from scorewire.cli.view_served import add_serving_arguments, serve_view
from scorewire.viewer import InvalidResults, ResultsFile
from scorewire.viewer.render import render_report


def cmd_view(args: argparse.Namespace) -> int:
    """`scorewire view`."""
    if args.output is None:
        return serve_view(args, lambda: load_settings(stderr_console()))
    if args.results is None or args.server:
        print("scorewire view: --output writes one results file's report: give RESULTS.json",
              file=sys.stderr)  # fmt: skip
        return EXIT_USAGE
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
        help="browse runs in the viewer, or write one run as an HTML report",
        description="Serve the viewer on 127.0.0.1 and open it: the runs recorded on this "
        "machine (scorewire run --record), a results JSON of `scorewire run --output` (or a "
        "directory of them), or with --server a server's recorded runs. With --output, "
        "write one results JSON as a self-contained HTML report instead: the run's checks, "
        "gate, cost, failing cases and, with --compare, what changed since a base run.",
    )
    view.add_argument(
        "results",
        metavar="RESULTS.json",
        nargs="?",
        help="a results file (or a directory of them) to show; default: this machine's runs",
    )
    view.add_argument(
        "--output", "-o", metavar="REPORT.html", help="write this HTML report, serve nothing"
    )
    view.add_argument(
        "--compare", metavar="BASE.json", help="a base run's results: show what changed since"
    )
    add_serving_arguments(view)
    view.set_defaults(func=cmd_view)
