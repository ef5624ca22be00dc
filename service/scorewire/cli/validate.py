"""`scorewire validate SUITE`: every problem of a suite file with its path, and whether
it can run here (preflight: judges' and providers' backends, credentials and prices)."""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, UsageError, load_settings, print_problems
from scorewire.cli.loading import load_run
from scorewire.cli.preflight_report import as_violations, preflight_run
from scorewire.cli.run_output import stderr_console
from scorewire.core.errors import SpecError


def cmd_validate(args: argparse.Namespace) -> int:
    """`scorewire validate SUITE`: every problem with its path; exit 2 when invalid or
    when it cannot run here (`--offline`: prices only, no credentials)."""
    err = stderr_console()
    settings = load_settings(err)
    if settings is None:
        return EXIT_USAGE
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
    problems = asyncio.run(
        preflight_run(
            spec,
            settings,
            local_scoring=True,
            budgeted=spec.budget is not None,
            offline=args.offline,
        )
    )
    if problems:
        print_problems(
            err,
            f"{args.suite}: valid, but cannot run here ({len(problems)} problems)",
            as_violations(problems),
        )
        return EXIT_USAGE
    checks = sorted({n for g in spec.groups for n in g.plan.names})
    print(
        f"{args.suite}: valid {spec.format} suite {spec.name!r}: {spec.planned} cases, "
        f"{len(checks)} checks ({', '.join(checks)})"
        + (" (offline: credentials not checked)" if args.offline else "")
    )
    return EXIT_PASSED


def add_parser(subparsers: Any) -> None:
    """Add `validate` to the `scorewire` parser's subparsers."""
    validate = subparsers.add_parser(
        "validate",
        help="check a suite file without running it",
        description="Report every problem of a suite file with its path, and every judge or "
        "provider it names that has no backend, credentials or price here; exit 2 when any.",
    )
    validate.add_argument("suite", metavar="SUITE", help="a suite YAML file")
    validate.add_argument("--suite", dest="suite_name", metavar="NAME", help="which suite")
    validate.add_argument(
        "--offline",
        action="store_true",
        help="skip the credential checks (prices are still checked)",
    )
    validate.set_defaults(func=cmd_validate)
