"""`scorewire checks`: the catalog of check types."""

from __future__ import annotations

import argparse
import json
from typing import Any

from rich.table import Table
from scorewire.cli.common import EXIT_PASSED
from scorewire.cli.run_output import stdout_console


def cmd_checks(args: argparse.Namespace) -> int:
    """`scorewire checks`: the catalog of check types."""
    import scorewire.checks  # noqa: F401 - registers the built-in check types
    from scorewire.core.registry import REGISTRY

    types = [t for t in REGISTRY.types() if not args.family or t.family == args.family]
    if args.json:
        doc = [
            {
                "name": t.name,
                "family": t.family,
                "description": t.description,
                "uses_judge": t.uses_judge,
                "aliases": list(t.aliases),
                "params_schema": t.params_schema(),
            }
            for t in types
        ]
        print(json.dumps(doc, ensure_ascii=False, indent=2))
        return EXIT_PASSED
    table = Table(title="scorewire check types", title_justify="left")
    for col in ("type", "family", "judge", "description"):
        table.add_column(col, overflow="fold")
    for t in types:
        table.add_row(t.name, t.family, "yes" if t.uses_judge else "", t.description)
    stdout_console().print(table)
    return EXIT_PASSED


def add_parser(subparsers: Any) -> None:
    """Add `checks` to the `scorewire` parser's subparsers."""
    checks = subparsers.add_parser(
        "checks", help="list the check types", description="Print the catalog of check types."
    )
    checks.add_argument("--json", action="store_true", help="as JSON, with parameter schemas")
    checks.add_argument("--family", help="only this family (text, judge, rag, ...)")
    checks.set_defaults(func=cmd_checks)
