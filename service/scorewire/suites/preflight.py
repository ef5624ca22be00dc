"""Preflight: refuse a suite that cannot run here, before the first judge or provider call.

Every judge a check names (or the default judge it falls back to) must have a configured
backend with credentials, and, when the run is budgeted, a price or the operator's
acceptance of unpriced calls (`SCOREWIRE_JUDGE_ALLOW_UNPRICED`, or a fallback price):
a budget refuses every call it cannot price, so such a run could only score errors.
Every provider a suite calls must have credentials. Credentials are the process's own
(settings and the SDKs' environment variables), never a request's.

The problems are `Precondition`s (field path, setting, message): the server answers
FAILED_PRECONDITION with them, the CLI exits 2. An offline check (`scorewire validate
--offline`) skips the credential part and keeps the price part.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from scorewire.core.errors import Precondition, join_path
from scorewire.engine.spec import CompiledCheck
from scorewire.generation.providers import ProviderCredentials, ProviderRef, provider_problem
from scorewire.judge.models import ModelRef, parse_model
from scorewire.judge.routing import NO_BACKEND_SETTING

DEFAULT_JUDGE_SETTING = "SCOREWIRE_JUDGE_MODEL"
"""The setting an alias usually comes from: a judge named without its backend (or a
backend without its model) is routed by the server's default judge."""

_SEVERAL = re.compile(r"^(?P<group>.*(?:judges|cascade))\[(?P<i>\d+)\]$")


class JudgeLike(Protocol):
    """What preflight asks of a judge (`scorewire.judge.JudgeService.preflight`)."""

    def preflight(
        self, model: str, *, budgeted: bool, credentials: bool = True
    ) -> tuple[str, str, str] | None:
        """(kind, setting, message) when a check naming `model` cannot be judged."""
        ...

    def describe(self, ref: ModelRef | None = None) -> str:
        """`backend:model` that `ref` routes to here (or why none)."""
        ...


def judge_needs(checks: Iterable[tuple[str, CompiledCheck]]) -> list[tuple[str, str]]:
    """(field path, judge model as written, `""` for the default) of every judge call the
    checks may make, in order; a panel's judges each at its own field
    (`checks[0].params.judges[1]`)."""
    return [
        (join_path(path, field) if field else path, model)
        for path, check in checks
        for field, model in check.judge_fields()
    ]


def check_judges(
    needs: Sequence[tuple[str, str]],
    judge: JudgeLike | None,
    *,
    budgeted: bool,
    credentials: bool = True,
    field_for: dict[str, str] | None = None,
) -> list[Precondition]:
    """The unmet judge preconditions, one per distinct problem (at its first field).

    `judge` None means this process has no judge at all: every judge check is refused.
    `field_for` maps a problem's setting to the field that really decides it (a checkllm
    file's `judge.backend`), when that is not the check itself.
    """
    out: list[Precondition] = []
    seen: set[str] = set()
    for path, model in needs:
        if judge is None:
            if not credentials:
                continue
            found: tuple[str, str, str] | None = (
                "BACKEND",
                NO_BACKEND_SETTING,
                "this check needs a judge, and none is configured here",
            )
        else:
            found = judge.preflight(model, budgeted=budgeted, credentials=credentials)
        if found is None:
            continue
        kind, setting, message = found
        if message in seen:
            continue
        seen.add(message)
        where = (field_for or {}).get(setting, path) if kind != "PRICE" else path
        out.append(Precondition(where, setting, message, kind))
    if judge is not None and not out:
        out.extend(_aliases(needs, judge))
    return out


def _aliases(needs: Sequence[tuple[str, str]], judge: JudgeLike) -> list[Precondition]:
    """A panel or cascade naming one judge twice under two names (`gpt-4o-mini` and
    `openai:gpt-4o-mini`, or `openai` where the default OpenAI model is that one): the
    same model would vote twice. Load refuses a name written twice; only the server knows
    where a short name routes, so this is a precondition of this server."""
    out: list[Precondition] = []
    seen: dict[tuple[str, str], str] = {}
    for path, model in needs:
        m = _SEVERAL.match(path)
        if m is None:
            continue
        try:
            routed = judge.describe(parse_model(model))
        except ValueError:  # refused at load already
            continue
        if " " in routed:  # routes nowhere here (a message, not backend:model)
            continue
        key = (m["group"], routed)
        first = seen.setdefault(key, path)
        if first != path:
            out.append(
                Precondition(
                    path,
                    DEFAULT_JUDGE_SETTING,
                    f"routes to {routed} here, as {first} does: each judge of a panel or "
                    "cascade must be a different model (name it as backend:model)",
                    "DUPLICATE_JUDGE",
                )
            )
    return out


def check_providers(
    providers: Sequence[tuple[str, ProviderRef]], creds: ProviderCredentials
) -> list[Precondition]:
    """The providers (field path, ref) without credentials here."""
    out: list[Precondition] = []
    for path, ref in providers:
        problem = provider_problem(ref, creds)
        if problem is not None:
            out.append(Precondition(path, problem[0], problem[1], "CREDENTIALS"))
    return out
