"""`scorewire validate SUITE`: every problem of a suite file with its path."""

from __future__ import annotations

import argparse
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, UsageError, print_problems
from scorewire.cli.loading import load_run
from scorewire.cli.run_output import stderr_console
from scorewire.core.errors import SpecError


def cmd_validate(args: argparse.Namespace) -> int:
    """`scorewire validate SUITE`: every problem with its path; exit 2 when invalid."""
    err = stderr_console()
    try:
        spec = load_run(args.suite, args.suite_name)
    except SpecError as problem:
        print_problems(
            err, f"{args.suite}: invalid ({len(problem.violations)} problems)", problem.violations
        )
        return EXIT_USAGE
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    checks = sorted({n for g in spec.groups for n in g.plan.names})
    print(
        f"{args.suite}: valid {spec.format} suite {spec.name!r}: {spec.planned} cases, "
        f"{len(checks)} checks ({', '.join(checks)})"
    )
    return EXIT_PASSED


def add_parser(subparsers: Any) -> None:
    """Add `validate` to the `scorewire` parser's subparsers."""
    validate = subparsers.add_parser(
        "validate",
        help="check a suite file without running it",
        description="Report every problem of a suite file with its path; exit 2 when invalid.",
    )
    validate.add_argument("suite", metavar="SUITE", help="a suite YAML file")
    validate.add_argument("--suite", dest="suite_name", metavar="NAME", help="which suite")
    validate.set_defaults(func=cmd_validate)
