"""Load-time errors: every problem with a check spec or suite, each with its field path.

Also `StartupError`, the one-line reason a server cannot start.
"""

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


@dataclass(frozen=True, slots=True)
class Precondition:
    """Something a suite needs that this process is not configured for (preflight).

    Not bad input: the suite is well formed, but a judge or provider it names has no
    backend, credentials or price here. Over gRPC that is FAILED_PRECONDITION; the CLI
    exits 2.
    """

    field: str
    """Where the suite names what is missing (`tests[0].assert[1]`, `judge.backend`)."""
    setting: str
    """What to set to fix it (`SCOREWIRE_GEMINI_API_KEY`)."""
    description: str
    """What is missing and what to set, for people."""
    kind: str = "CREDENTIALS"
    """`BACKEND` (nothing configured), `CREDENTIALS`, `PRICE`, or `DUPLICATE_JUDGE` (two
    judges of one panel or cascade that route to one model here)."""

    def __str__(self) -> str:
        return f"{self.field}: {self.description}" if self.field else self.description


class PreconditionError(Exception):
    """A suite that cannot run here: every unmet precondition, found before any call."""

    def __init__(self, problems: Iterable[Precondition]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(str(p) for p in self.problems) or "a precondition failed")


class StartupError(Exception):
    """A server that cannot start for a reason its operator fixes in configuration.

    The message is one line naming the setting and what to do; `scorewire serve` prints
    it without a traceback and exits with status 2.
    """


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
