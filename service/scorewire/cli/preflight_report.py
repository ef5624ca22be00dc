"""The CLI's preflight: what a suite needs that this machine lacks, before any call.

Providers are always called here (also with `--server`, which sends recorded outputs);
judges are checked here only when the scoring is local (a server checks its own and
answers FAILED_PRECONDITION). `offline` (`scorewire validate --offline`) checks prices
only, no credentials.
"""

from __future__ import annotations

from scorewire.cli.loading import RunSpec
from scorewire.core.errors import FieldViolation, Precondition
from scorewire.generation.providers import ProviderCredentials
from scorewire.settings import Settings
from scorewire.suites.preflight import check_judges, check_providers, judge_needs


async def preflight_run(
    spec: RunSpec,
    settings: Settings,
    *,
    local_scoring: bool,
    budgeted: bool,
    offline: bool = False,
) -> list[Precondition]:
    """Every unmet precondition of running `spec` here."""
    from scorewire.cli.local import build_judge

    problems: list[Precondition] = []
    if not offline:
        creds = ProviderCredentials.from_settings(settings)
        refs = [(spec.provider_paths.get(r.id, "providers"), r) for r in spec.providers]
        problems.extend(check_providers(refs, creds))
    if local_scoring and spec.uses_judge:
        judge = build_judge(spec, settings.model_copy(update={"cache_url": "memory://"}))
        try:
            field_for = {}
            if spec.judge_field:
                # The file's `judge:` section picks the backend the assertions use.
                setting = f"SCOREWIRE_{spec.judge_backend.upper()}_API_KEY"
                field_for = {setting: spec.judge_field}
            problems.extend(
                check_judges(
                    judge_needs(spec.check_paths()),
                    judge,
                    budgeted=budgeted,
                    credentials=not offline,
                    field_for=field_for,
                )
            )
        finally:
            await judge.aclose()
    return problems


def as_violations(problems: list[Precondition]) -> list[FieldViolation]:
    """The problems as the CLI prints them (path: message)."""
    return [FieldViolation(p.field, p.description) for p in problems]
