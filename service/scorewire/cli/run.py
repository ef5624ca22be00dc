"""`scorewire run`, `scorewire validate` and `scorewire checks`.

`scorewire run SUITE` reads a suite file in either format — checkllm (it has `tests:`
or `prompts:`) or evalstone (`checks:`/`suites:`) — produces the outputs its target
needs (provider calls, an HTTP application, or recorded outputs), scores them and
prints a summary table. In process by default; with `--server HOST:PORT` the scoring
happens on a scorewire server through RunSuite, while outputs are still produced here
(provider credentials stay on this machine) and sent as recorded outputs.

Exit codes:

| code | meaning |
|---|---|
| 0 | the run finished and its gate passed |
| 1 | the run finished and its gate failed |
| 2 | a bad suite or bad arguments, or the run could not start (missing credentials, |
|   | server unreachable, the server refused the suite) |
| 130 | interrupted (Ctrl-C) |

Ctrl-C (SIGINT) cancels every provider and judge call in flight (and the RunSuite call
on a server), then still prints the summary of the cases that finished and writes
`--output`/`--junit` with them (`"interrupted": true`, and a gate that does not pass:
a partial run is no verdict); the exit code is 130. A second Ctrl-C quits at once
without writing anything.

With `--server`, the suite goes to the server as it is (evalstone: the YAML without
`imports`, `datasets` and targets; checkllm: each test's assertions as check specs),
the cases in RunSuite calls of at most 2,000; the gate is evaluated here over every
case, including those whose output could not be produced. The server's judge grades
(a checkllm `judge: {backend: gemini}` then means the server's OpenAI-compatible judge
backend, which must point at Gemini), and its verdict-cache savings are not shown.

Environment: the `SCOREWIRE_*` settings (judge, embeddings, provider keys and base
URLs; `scorewire.settings.Settings`) plus the SDKs' own `OPENAI_API_KEY`,
`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import SecretStr, ValidationError
from rich.console import Console
from rich.table import Table
from scorewire.cli.run_output import (
    Record,
    RunProgress,
    RunReport,
    print_summary,
    stderr_console,
    stdout_console,
    write_junit,
    write_results_json,
)
from scorewire.core.context import CheckContext
from scorewire.core.errors import FieldViolation, SpecError, pydantic_violations
from scorewire.core.model import Output, Score, ScoreError
from scorewire.engine.generation import (
    Generator,
    Group,
    Job,
    JobResult,
    Produced,
    Recorded,
    produce_all,
    run_groups,
    suite_jobs,
    unproduced_result,
)
from scorewire.engine.providers import (
    GEMINI_BASE_URL,
    Provider,
    ProviderCredentials,
    ProviderRef,
    build_provider,
)
from scorewire.engine.runner import CaseResult
from scorewire.engine.summary import Gate
from scorewire.engine.targets import PromptTarget
from scorewire.settings import Settings

EXIT_PASSED = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

SERVER_BATCH = 2_000
"""Cases per RunSuite call in --server mode: far below the server's per-request limits
(cases, message size), and the gate is evaluated here over every batch anyway."""


class UsageError(Exception):
    """The run cannot start; the message is for people. Exit code 2."""

    def __init__(self, message: str, violations: Sequence[FieldViolation] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.violations = list(violations)


# ---- loading ------------------------------------------------------------------------------


@dataclass(slots=True)
class RunSpec:
    """A loaded suite of either format, as jobs in groups."""

    path: Path
    format: str
    """`checkllm` or `evalstone`."""
    name: str
    description: str
    groups: list[Group]
    gate: Gate
    budget: float | None
    concurrency: int
    cache: bool = True
    providers: list[ProviderRef] = field(default_factory=list)
    """Providers some job calls."""
    judge_backend: str = "auto"
    """checkllm's `judge.backend` (gemini routes the OpenAI-compatible judge to Gemini)."""
    server_yaml: str = ""
    """evalstone: the suite as sent to a server (no imports, datasets or targets)."""

    @property
    def uses_judge(self) -> bool:
        """Whether any check may call a judge."""
        return any(g.plan.uses_judge for g in self.groups)

    @property
    def planned(self) -> int:
        """Cases the run will score."""
        return sum(len(g.jobs) for g in self.groups)


def read_suite(path: str) -> tuple[Path, Any]:
    """The file's path and parsed YAML; SpecError for unreadable or broken YAML."""
    from scorewire.engine.suite import parse_yaml

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{path} is not UTF-8 text") from None
    return p, parse_yaml(text)


def detect_format(data: object) -> str:
    """`checkllm` when the document has `tests:` or `prompts:`, else `evalstone`."""
    from scorewire.engine.checkllm import is_checkllm

    return "checkllm" if is_checkllm(data) else "evalstone"


def load_run(path: str, suite_name: str | None = None) -> RunSpec:
    """Load a suite file of either format; SpecError (with paths) or UsageError."""
    import scorewire.checks  # noqa: F401 - registers the built-in check types

    p, data = read_suite(path)
    if detect_format(data) == "checkllm":
        return _checkllm_run(p, data, suite_name)
    return _evalstone_run(p, data, suite_name)


def _checkllm_run(path: Path, data: Any, suite_name: str | None) -> RunSpec:
    from scorewire.engine.checkllm import load_checkllm_data

    if suite_name:
        raise UsageError("--suite names a suite of an evalstone file; a checkllm file is one suite")
    suite = load_checkllm_data(data)
    return RunSpec(
        path=path,
        format="checkllm",
        name=suite.description or path.stem,
        description=suite.description,
        groups=suite.groups(),
        gate=suite.gate,
        budget=suite.settings.budget,
        concurrency=suite.settings.effective_concurrency,
        cache=suite.settings.cache,
        providers=suite.called_providers(),
        judge_backend=suite.judge.backend,
    )


def _evalstone_run(path: Path, data: Any, suite_name: str | None) -> RunSpec:
    from scorewire.engine.suite import load_suite_data

    loaded = load_suite_data(data, base_dir=path.parent)
    suite = loaded.select(suite_name)
    if suite.cases is None:
        raise UsageError(
            f"suite {suite.name!r} has no dataset: give it `dataset:` to run it from the CLI"
        )
    target = suite.target
    providers = [target.provider] if isinstance(target, PromptTarget) else []
    group = Group(suite.name, suite.plan, suite_jobs(suite))
    return RunSpec(
        path=path,
        format="evalstone",
        name=suite.name,
        description=loaded.description,
        groups=[group],
        gate=suite.gate,
        budget=suite.settings.budget,
        concurrency=suite.settings.concurrency,
        providers=providers,
        server_yaml=_server_yaml(data),
    )


def _server_yaml(data: Any) -> str:
    """The suite as a server takes it: no imports (the server has its own), no datasets
    (the cases travel in the request) and no targets (outputs are produced here)."""
    doc = {k: v for k, v in data.items() if k not in ("imports", "datasets")}
    suites = doc.get("suites")
    if isinstance(suites, dict):
        doc["suites"] = {
            name: (
                {k: v for k, v in s.items() if k not in ("dataset", "target")}
                if isinstance(s, dict)
                else s
            )
            for name, s in suites.items()
        }
    return yaml.safe_dump(json.loads(json.dumps(doc, default=str)), sort_keys=False)


# ---- running ----------------------------------------------------------------------------


class Collector:
    """Gathers finished cases into records and totals, and moves the progress bar."""

    def __init__(self, spec: RunSpec, progress: RunProgress | None) -> None:
        from scorewire.engine.generation import GroupedSummaryBuilder

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
        job: Job,
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


def _judge_settings(spec: RunSpec, settings: Settings, creds: ProviderCredentials) -> Settings:
    update: dict[str, Any] = {}
    if spec.judge_backend == "gemini":
        # The judge's OpenAI-compatible backend, pointed at Gemini's endpoint.
        update["openai_base_url"] = creds.gemini_base_url or GEMINI_BASE_URL
        if creds.gemini_api_key:
            update["openai_api_key"] = SecretStr(creds.gemini_api_key)
    if not spec.cache:
        update["cache_url"] = "memory://"  # no shared cache; one run still asks once
    return settings.model_copy(update=update) if update else settings


def open_resources(
    spec: RunSpec, settings: Settings, budget_limit: float | None, *, local_scoring: bool
) -> Resources:
    """Build the clients a run needs; UsageError when one cannot be configured."""
    from scorewire.judge import Budget, JudgeService
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
                judge = JudgeService.from_settings(_judge_settings(spec, settings, creds))
            from scorewire.checks.embeddings import EMBEDDINGS_EXTRA, EmbeddingsClient

            embeddings = EmbeddingsClient.from_settings(settings)
            if embeddings is not None:
                extras[EMBEDDINGS_EXTRA] = embeddings
        except ValueError as err:
            raise UsageError(str(err)) from None
    generator = Generator(
        providers, budget=budget, prices=PriceTable(settings.judge_prices), cache=spec.cache
    )
    return Resources(generator, budget, judge, extras)


async def run_in_process(spec: RunSpec, res: Resources, collector: Collector) -> None:
    """Produce and score every job here, counting each as it finishes."""
    ctx = CheckContext(judge=res.judge, budget=res.budget, extras=res.extras)
    async for jr in run_groups(spec.groups, res.generator, ctx, concurrency=spec.concurrency):
        collector.add_job_result(jr)


def _score_from_pb(s: Any) -> Score:
    error = ScoreError(s.error.code, s.error.message) if s.HasField("error") else None
    return Score(
        s.value,
        s.passed,
        s.reason,
        cost_usd=s.cost_usd,
        latency_ms=s.latency_ms,
        error=error,
        cached=s.cached,
        unpriced=s.unpriced,
    )


def _case_json(job: Job, output: Output) -> dict[str, Any]:
    def safe(value: Any) -> Any:
        return json.loads(json.dumps(value, ensure_ascii=False, default=str))

    sample: dict[str, Any] = {"id": job.sample.id, "metadata": safe(job.sample.metadata)}
    if job.sample.input is not None:
        sample["input"] = safe(job.sample.input)
    if job.sample.expected is not None:
        sample["expected"] = safe(job.sample.expected)
    out: dict[str, Any] = {"text": output.text}
    if output.value is not None:
        out["value"] = safe(output.value)
    if output.metadata:
        out["metadata"] = safe(output.metadata)
    return {"sample": sample, "output": out}


def _server_violations(err: Any, spec: RunSpec, group: Group) -> list[FieldViolation]:
    """The server's field paths in the file's own terms."""
    out = []
    for v in err.field_violations:
        where = v.field
        if where.startswith("suite_yaml."):
            where = where.removeprefix("suite_yaml.")
        elif spec.format == "checkllm" and where.startswith("checks["):
            head, _, rest = where.partition("]")
            rest = rest.removeprefix(".params")
            where = f"tests[{group.name.removeprefix('t')}].assert[{head[len('checks[') :]}]{rest}"
        out.append(FieldViolation(where, v.description))
    return out


@dataclass(frozen=True)
class ServerTarget:
    """Where `--server` scores: the address, TLS credentials and the bearer token."""

    address: str
    credentials: Any = field(default=None, repr=False)
    """grpc.ChannelCredentials, or None for plaintext."""
    metadata: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    """Carries the bearer token: kept out of repr so it never reaches output or logs."""


def server_target(args: argparse.Namespace) -> ServerTarget | None:
    """The --server target with its TLS options; the token comes from SCOREWIRE_TOKEN.

    The token is read from the environment, never from a flag, so it stays out of shell
    history and process listings. Raises UsageError for unreadable certificate files.
    """
    if not args.server:
        return None
    credentials = None
    if args.tls or args.tls_ca or args.tls_cert or args.tls_key:
        import grpc

        if bool(args.tls_cert) != bool(args.tls_key):
            raise UsageError("--tls-cert and --tls-key go together (mutual TLS)")
        try:
            ca = Path(args.tls_ca).read_bytes() if args.tls_ca else None
            cert = Path(args.tls_cert).read_bytes() if args.tls_cert else None
            key = Path(args.tls_key).read_bytes() if args.tls_key else None
        except OSError as err:
            raise UsageError(f"cannot read a TLS file: {err.filename}: {err.strerror}") from None
        credentials = grpc.ssl_channel_credentials(ca, key, cert)
    token = os.environ.get("SCOREWIRE_TOKEN", "").strip()
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    return ServerTarget(args.server, credentials, metadata)


async def run_on_server(
    spec: RunSpec,
    res: Resources,
    collector: Collector,
    target: ServerTarget | str,
    progress: RunProgress | None,
    budget_limit: float | None,
) -> None:
    """Produce outputs here, then score each group with one RunSuite call."""
    from scorewire.client import AsyncClient, ScorewireError

    produced: dict[int, Produced] = {}
    to_produce = [
        Group(g.name, g.plan, [j for j in g.jobs if not isinstance(j.source, Recorded)])
        for g in spec.groups
    ]
    n_produce = sum(len(g.jobs) for g in to_produce)
    if n_produce:
        if progress is not None:
            progress.phase("generating", n_produce)
        async for _group, job, p in produce_all(
            to_produce, res.generator, concurrency=spec.concurrency
        ):
            produced[job.index] = p
            if progress is not None:
                progress.advance(passed=p.error is None, errored=p.error is not None)
    if progress is not None:
        progress.phase("scoring", spec.planned)
    if isinstance(target, str):
        target = ServerTarget(target)
    async with AsyncClient(
        target.address, credentials=target.credentials, metadata=target.metadata, timeout=None
    ) as client:
        for group in spec.groups:
            await _score_group_on_server(
                spec, group, client, collector, produced, res, budget_limit, ScorewireError
            )


async def _score_group_on_server(
    spec: RunSpec,
    group: Group,
    client: Any,
    collector: Collector,
    produced: dict[int, Produced],
    res: Resources,
    budget_limit: float | None,
    error_type: type[Exception],
) -> None:
    names = group.plan.names
    types = [c.type for c in group.plan.checks]
    sendable: list[tuple[Job, Produced]] = []
    for job in group.jobs:
        p = (
            Produced(job.source.output)
            if isinstance(job.source, Recorded)
            else produced.get(job.index)
        )
        if p is None:
            continue
        if p.output is None or not names:
            result = (
                unproduced_result(group.plan, job, p)
                if p.output is None
                else CaseResult(job.index, job.sample.id, [])
            )
            collector.add(group, job, p, result, names, types)
        else:
            sendable.append((job, p))
    kwargs: dict[str, Any] = {"timeout": None}
    if spec.format == "evalstone":
        kwargs.update(suite_yaml=spec.server_yaml, suite_name=group.name)
    else:
        kwargs.update(
            checks=[{"type": s.type, "params": dict(s.params), "name": s.name} for s in group.specs]
        )
    for start in range(0, len(sendable), SERVER_BATCH):
        batch = sendable[start : start + SERVER_BATCH]
        if budget_limit is not None:
            spent = collector.builder.finish().cost_usd + res.generator.stats.cost_usd
            kwargs["budget_usd"] = max(0.0, budget_limit - spent)
        await _run_batch(spec, group, client, collector, batch, kwargs, error_type)


async def _run_batch(
    spec: RunSpec,
    group: Group,
    client: Any,
    collector: Collector,
    batch: list[tuple[Job, Produced]],
    kwargs: dict[str, Any],
    error_type: type[Exception],
) -> None:
    cases = [_case_json(job, p.output) for job, p in batch if p.output is not None]
    run = client.run_suite(cases, **kwargs)
    try:
        async for r in run:
            job, p = batch[r.index]
            scores = [_score_from_pb(s) for s in r.scores]
            result = CaseResult(job.index, job.sample.id, scores)
            collector.add(
                group, job, p, result, [s.name for s in r.scores], [s.type for s in r.scores]
            )
    except error_type as err:
        violations = _server_violations(err, spec, group)
        if violations:
            raise UsageError("the server refused the suite:", violations) from None
        raise UsageError(f"the server failed: {err}") from None
    finally:
        run.cancel()


async def execute(
    spec: RunSpec,
    settings: Settings,
    *,
    server: ServerTarget | str | None,
    budget_limit: float | None,
    progress_console: Console,
) -> RunReport:
    """Run the suite; on SIGINT stop every call and report what finished."""
    res = open_resources(spec, settings, budget_limit, local_scoring=server is None)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        if interrupted:
            raise KeyboardInterrupt  # a second Ctrl-C: quit now, without writing files
        if task is not None:
            interrupted = True
            task.cancel()

    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    with RunProgress(console=progress_console) as progress:
        collector = Collector(spec, progress)
        try:
            if server is None:
                progress.phase("scoring", spec.planned)
                await run_in_process(spec, res, collector)
            else:
                await run_on_server(spec, res, collector, server, progress, budget_limit)
        except asyncio.CancelledError:
            if not interrupted or task is None:
                raise
            task.uncancel()
        finally:
            stats = res.generator.stats
            collector.generation_cost_usd = stats.cost_usd
            collector.cached_generations = stats.cached
            collector.saved_usd = stats.saved_usd + (
                res.judge.stats.saved_usd if res.judge is not None else 0.0
            )
            await res.aclose()
    if installed:
        loop.remove_signal_handler(signal.SIGINT)
    report = collector.report(interrupted=interrupted, budget=budget_limit)
    if interrupted:
        # A partial run is no verdict: its gate never passes (the exit code is 130 anyway).
        report.summary.gate_passed = False
        report.summary.gate_reasons.insert(
            0, f"the run was interrupted after {report.summary.cases} of {spec.planned} cases"
        )
    if server is not None:
        where = server.address if isinstance(server, ServerTarget) else server
        report.notes.append(f"scored on {where}; judge savings on the server are not shown")
    return report


# ---- commands -----------------------------------------------------------------------------


def _print_problems(console: Console, title: str, violations: Sequence[FieldViolation]) -> None:
    console.print(title, markup=False, highlight=False)
    for v in violations:
        console.print(f"  {v.field or '(suite)'}: {v.description}", markup=False, highlight=False)


def _settings(err_console: Console) -> Settings | None:
    try:
        return Settings()
    except ValidationError as err:
        _print_problems(
            err_console,
            "invalid SCOREWIRE_* settings:",
            pydantic_violations(err, "", noun="setting"),
        )
        return None


def cmd_run(args: argparse.Namespace) -> int:
    """`scorewire run SUITE`."""
    err = stderr_console()
    out = stdout_console()
    if args.budget is not None and args.budget < 0:
        err.print("--budget must be ≥ 0", markup=False)
        return EXIT_USAGE
    try:
        spec = load_run(args.suite, args.suite_name)
    except SpecError as problem:
        _print_problems(err, f"{args.suite}: invalid suite", problem.violations)
        return EXIT_USAGE
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    settings = _settings(err)
    if settings is None:
        return EXIT_USAGE
    budget = args.budget if args.budget is not None else spec.budget
    try:
        target = server_target(args)
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    try:
        report = asyncio.run(
            execute(spec, settings, server=target, budget_limit=budget, progress_console=err)
        )
    except KeyboardInterrupt:
        err.print("interrupted before any result could be reported", markup=False)
        return EXIT_INTERRUPTED
    except UsageError as problem:
        if problem.violations:
            _print_problems(err, problem.message, problem.violations)
        else:
            err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    print_summary(out, report)
    try:
        if args.output:
            write_results_json(args.output, report)
        if args.junit:
            write_junit(args.junit, report)
    except OSError as problem:
        err.print(f"cannot write results: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_PASSED if report.summary.gate_passed else EXIT_FAILED


def cmd_validate(args: argparse.Namespace) -> int:
    """`scorewire validate SUITE`: every problem with its path; exit 2 when invalid."""
    err = stderr_console()
    try:
        spec = load_run(args.suite, args.suite_name)
    except SpecError as problem:
        _print_problems(
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


def add_run_parsers(subparsers: Any) -> None:
    """Add `run`, `validate` and `checks` to the `scorewire` parser's subparsers."""
    run = subparsers.add_parser(
        "run",
        help="run a suite file (checkllm or evalstone format) and gate on it",
        description="Run a suite: produce the outputs (providers, an HTTP target, or "
        "recorded), score them, print a summary. Exit 0 when the gate passes, 1 when it "
        "fails, 2 for a bad suite or arguments, 130 when interrupted.",
    )
    run.add_argument("suite", metavar="SUITE", help="a suite YAML file")
    run.add_argument(
        "--server", metavar="HOST:PORT", help="score on this scorewire server (default: here)"
    )
    run.add_argument("--suite", dest="suite_name", metavar="NAME", help="which suite of the file")
    run.add_argument("--tls", action="store_true", help="reach --server over TLS (system roots)")
    run.add_argument("--tls-ca", metavar="CA.pem", help="TLS, trusting this CA for --server")
    run.add_argument("--tls-cert", metavar="CERT.pem", help="client certificate (mutual TLS)")
    run.add_argument("--tls-key", metavar="KEY.pem", help="client key (mutual TLS)")
    run.add_argument(
        "--budget", type=float, metavar="USD", help="most dollars to spend (overrides the file)"
    )
    run.add_argument("--output", metavar="RESULTS.json", help="write every result as JSON")
    run.add_argument("--junit", metavar="RESULTS.xml", help="write JUnit XML for CI systems")
    run.set_defaults(func=cmd_run)

    validate = subparsers.add_parser(
        "validate",
        help="check a suite file without running it",
        description="Report every problem of a suite file with its path; exit 2 when invalid.",
    )
    validate.add_argument("suite", metavar="SUITE", help="a suite YAML file")
    validate.add_argument("--suite", dest="suite_name", metavar="NAME", help="which suite")
    validate.set_defaults(func=cmd_validate)

    checks = subparsers.add_parser(
        "checks", help="list the check types", description="Print the catalog of check types."
    )
    checks.add_argument("--json", action="store_true", help="as JSON, with parameter schemas")
    checks.add_argument("--family", help="only this family (text, judge, rag, ...)")
    checks.set_defaults(func=cmd_checks)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m scorewire.cli.run run|validate|checks ...`: these commands alone."""
    parser = argparse.ArgumentParser(prog="scorewire")
    add_run_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
