"""Load-time errors: every problem with a check spec or suite, each with its field path."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import ValidationError


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One problem in a request or suite, at a field path like `checks[2].params.pattern`."""

    field: str
    """Where the problem is, in the caller's own terms (dots for keys, [i] for items)."""
    description: str
    """What is wrong and, where it helps, what would be right."""

    def __str__(self) -> str:
        return f"{self.field}: {self.description}" if self.field else self.description


class SpecError(Exception):
    """A check spec, compact line or suite that cannot be loaded.

    Carries every violation found, not just the first, so a caller fixes them in one go.
    """

    def __init__(self, violations: Iterable[FieldViolation]) -> None:
        self.violations = list(violations)
        super().__init__("; ".join(str(v) for v in self.violations) or "invalid spec")

    @classmethod
    def at(cls, field: str, description: str) -> SpecError:
        """A SpecError with a single violation."""
        return cls([FieldViolation(field, description)])


def join_path(base: str, part: str | int) -> str:
    """Append a key or index to a field path: ("checks", 2) -> "checks[2]"."""
    if isinstance(part, int):
        return f"{base}[{part}]"
    if not base:
        return part
    return f"{base}.{part}"


def pydantic_violations(
    err: ValidationError,
    base: str,
    *,
    noun: str = "key",
    rename: Mapping[str, str] | None = None,
) -> list[FieldViolation]:
    """A pydantic ValidationError as violations at paths below `base`.

    `noun` words the two errors a caller writes most ("unknown parameter", "required
    parameter is missing"); `rename` maps model field names back to the caller's names.
    """
    out = []
    for e in err.errors(include_url=False):
        path = base
        for part in e["loc"]:
            name = part if isinstance(part, int) else str(part)
            if isinstance(name, str) and rename:
                name = rename.get(name, name)
            path = join_path(path, name)
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = f"unknown {noun}"
        elif e["type"] == "missing":
            msg = f"required {noun} is missing"
        out.append(FieldViolation(path, msg))
    return out


class StartupError(Exception):
    """The server cannot start as configured: one line naming the setting or port and the fix.

    `scorewire serve` prints the message alone (no traceback) and exits with status 2.
    """
