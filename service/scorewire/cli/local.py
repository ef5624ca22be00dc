"""Running a suite in this process: the clients a run talks to, and the collector of results."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from scorewire.cli.common import UsageError
from scorewire.cli.loading import RunSpec
from scorewire.cli.run_output import Record, RunProgress, RunReport
from scorewire.core.context import CheckContext
from scorewire.engine.runner import CaseResult
from scorewire.generation.generator import (
    GenerationJob,
    Generator,
    Group,
    JobResult,
    Produced,
    run_groups,
)
from scorewire.generation.providers import Provider, ProviderCredentials, build_provider
from scorewire.settings import Settings


class Collector:
    """Gathers finished cases into records and totals, and moves the progress bar."""

    def __init__(self, spec: RunSpec, progress: RunProgress | None) -> None:
        from scorewire.generation.generator import GroupedSummaryBuilder

        self.spec = spec
        self.progress = progress
        self.builder = GroupedSummaryBuilder()
        for group in spec.groups:
            self.builder.declare(group.plan.names, [c.type for c in group.plan.checks])
        self.records: list[Record] = []
        self.generation_cost_usd = 0.0
        self.cached_generations = 0
        self.saved_usd = 0.0

    def add(
        self,
        group: Group,
        job: GenerationJob,
        produced: Produced,
        result: CaseResult,
        names: list[str],
        types: list[str],
    ) -> None:
        """Count one finished case."""
        self.builder.add_named(result, names, types)
        error = produced.error
        self.records.append(
            Record(
                index=job.index,
                sample=job.sample,
                output=produced.output,
                provider=job.provider,
                prompt=job.prompt,
                group=group.name,
                description=group.description,
                passed=result.passed,
                names=names,
                types=types,
                scores=result.scores,
                generation_cost_usd=produced.cost_usd,
                generation_latency_ms=produced.latency_ms,
                generation_cached=produced.cached,
                generation_unpriced=produced.unpriced,
                generation_error=None if error is None else (error.code, error.message),
            )
        )
        if self.progress is not None:
            errored = any(s.error is not None for s in result.scores)
            self.progress.advance(passed=result.passed, errored=errored)

    def add_job_result(self, jr: JobResult) -> None:
        """Count a case scored in process."""
        self.add(jr.group, jr.job, jr.produced, jr.result, jr.names, jr.types)

    def report(self, *, interrupted: bool, budget: float | None) -> RunReport:
        """The run's report so far."""
        from scorewire.cli.console import assertion_labels

        assertions: dict[str, list[tuple[str, str, str]]] = {}
        titles: dict[str, str] = {}
        for g in self.spec.groups:
            values = assertion_labels(g.specs) if g.specs else [""] * len(g.plan.checks)
            assertions[g.name] = [
                (c.name, c.type, v) for c, v in zip(g.plan.checks, values, strict=False)
            ]
            if self.spec.format == "checkllm":
                index = g.name.removeprefix("t")
                titles[g.name] = f"{index} {g.description}".strip()
        return RunReport(
            suite_path=str(self.spec.path),
            suite_format=self.spec.format,
            suite_name=self.spec.name,
            description=self.spec.description,
            summary=self.builder.finish(self.spec.gate),
            records=self.records,
            planned=self.spec.planned,
            interrupted=interrupted,
            budget_usd=budget,
            generation_cost_usd=self.generation_cost_usd,
            cached_generations=self.cached_generations,
            saved_usd=self.saved_usd,
            assertions=assertions,
            test_titles=titles,
            prompts=list(self.spec.prompts),
        )


@dataclass(slots=True)
class Resources:
    """What a run talks to: providers, judge, embeddings, its budget."""

    generator: Generator
    budget: Any
    judge: Any = None
    extras: dict[str, Any] = field(default_factory=dict)

    async def aclose(self) -> None:
        """Close every client."""
        await self.generator.aclose()
        if self.judge is not None:
            await self.judge.aclose()


def _judge_settings(spec: RunSpec, settings: Settings) -> Settings:
    if not spec.cache:
        # No shared cache; one run still asks once.
        return settings.model_copy(update={"cache_url": "memory://"})
    return settings


def build_judge(spec: RunSpec, settings: Settings) -> Any:
    """The run's judge; a checkllm `judge: {backend: gemini}` gets Gemini's endpoint as its
    OpenAI-compatible backend, with Gemini's key only."""
    from scorewire.judge import JudgeService

    judge = JudgeService.from_settings(
        _judge_settings(spec, settings), gemini=spec.judge_backend == "gemini"
    )
    if spec.fresh:
        judge.use_cache = judge.share_calls = False
    return judge


def open_resources(
    spec: RunSpec, settings: Settings, budget_limit: float | None, *, local_scoring: bool
) -> Resources:
    """Build the clients a run needs; UsageError when one cannot be configured."""
    from scorewire.judge import Budget
    from scorewire.judge.pricing import PriceTable

    creds = ProviderCredentials.from_settings(settings)
    providers: dict[str, Provider] = {}
    try:
        for ref in spec.providers:
            providers[ref.id] = build_provider(ref, creds)
    except ValueError as err:
        raise UsageError(str(err)) from None
    budget = Budget(budget_limit)
    judge = None
    extras: dict[str, Any] = {"suite_dir": str(spec.path.parent.resolve())}
    if local_scoring:
        try:
            if spec.uses_judge:
                judge = build_judge(spec, settings)
            from scorewire.text.embeddings import EMBEDDINGS_EXTRA, EmbeddingsClient

            embeddings = EmbeddingsClient.from_settings(settings)
            if embeddings is not None:
                extras[EMBEDDINGS_EXTRA] = embeddings
        except ValueError as err:
            raise UsageError(str(err)) from None
    generator = Generator(
        providers, budget=budget, prices=PriceTable.from_settings(settings), cache=spec.cache
    )
    return Resources(generator, budget, judge, extras)


async def run_in_process(spec: RunSpec, res: Resources, collector: Collector) -> None:
    """Produce and score every job here, counting each as it finishes."""
    ctx = CheckContext(
        judge=res.judge,
        budget=res.budget,
        extras=res.extras,
        fresh_since=time.time() if spec.fresh_judges else None,
    )
    async for jr in run_groups(spec.groups, res.generator, ctx, concurrency=spec.concurrency):
        collector.add_job_result(jr)
