"""What every CLI command shares: exit codes, the usage error, printing problems."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import ValidationError
from rich.console import Console
from scorewire.core.errors import FieldViolation, pydantic_violations
from scorewire.settings import Settings

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """The run cannot start; the message is for people. Exit code 2."""

    def __init__(self, message: str, violations: Sequence[FieldViolation] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.violations = list(violations)


def print_problems(console: Console, title: str, violations: Sequence[FieldViolation]) -> None:
    console.print(title, markup=False, highlight=False)
    for v in violations:
        console.print(f"  {v.field or '(suite)'}: {v.description}", markup=False, highlight=False)


def load_settings(err_console: Console) -> Settings | None:
    try:
        return Settings()
    except ValidationError as err:
        print_problems(
            err_console,
            "invalid SCOREWIRE_* settings:",
            pydantic_violations(err, "", noun="setting"),
        )
        return None
