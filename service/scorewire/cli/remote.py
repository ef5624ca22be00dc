"""`scorewire run --server`: outputs produced here, scored on a server through RunSuite."""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from scorewire.cli.common import UsageError
from scorewire.cli.loading import RunSpec
from scorewire.cli.local import Collector, Resources
from scorewire.cli.run_output import RunProgress
from scorewire.core.errors import FieldViolation
from scorewire.core.judged import JudgeMark
from scorewire.core.model import Output, Score, ScoreError, Spread
from scorewire.engine.runner import CaseResult
from scorewire.generation.generator import (
    GenerationJob,
    Group,
    Produced,
    Recorded,
    produce_all,
    unproduced_result,
)

if TYPE_CHECKING:
    from scorewire.cli.server_run import ServerRun

SERVER_BATCH = 2_000
"""Cases per RunSuite call in --server mode: far below the server's per-request limits
(cases, message size), and the gate is evaluated here over every batch anyway."""


def _score_from_pb(s: Any) -> Score:
    error = ScoreError(s.error.code, s.error.message) if s.HasField("error") else None
    score = Score(
        s.value,
        s.passed,
        s.reason,
        cost_usd=s.cost_usd,
        latency_ms=s.latency_ms,
        error=error,
        cached=s.cached,
        unpriced=s.unpriced,
        skipped=s.skipped,
    )
    # The spread and the judge mark are kept for the results file (the viewer's queue
    # reads the spread) and for `--baseline`'s judge drift, which compares only the checks
    # that asked a judge (and the models their providers reported).
    if s.HasField("spread"):
        score.spread = Spread(
            tuple(s.spread.values), s.spread.agreement, calls=s.spread.judge_calls or None
        )
    if s.HasField("judge"):
        j = s.judge
        score.judge = JudgeMark(tuple(j.models), tuple(j.reported_models), j.prompt_version)
    return score


def _case_json(job: GenerationJob, output: Output) -> dict[str, Any]:
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
    run: ServerRun | None = None,
) -> None:
    """Produce outputs here, then score each group with RunSuite calls: with `run`, each
    call a part of that one run on the server (`scorewire.cli.server_run`)."""
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
        if run is not None:
            await run.open(client.channel)
        for group in spec.groups:
            await _score_group_on_server(
                spec, group, client, collector, produced, res, budget_limit, ScorewireError, run
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
    run: ServerRun | None,
) -> None:
    names = group.plan.names
    types = [c.type for c in group.plan.checks]
    sendable: list[tuple[GenerationJob, Produced]] = []
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
    # Sent whenever the run asks again: a checkllm file's settings do not travel.
    kwargs: dict[str, Any] = {"timeout": None, "fresh_judges": spec.fresh_judges or None}
    if spec.format == "evalstone":
        kwargs.update(suite_yaml=spec.server_yaml, suite_name=group.name)
    else:
        kwargs.update(
            checks=[{"type": s.type, "params": dict(s.params), "name": s.name} for s in group.specs]
        )
    for batch in _batches(sendable):
        if budget_limit is not None:
            spent = collector.builder.finish().cost_usd + res.generator.stats.cost_usd
            kwargs["budget_usd"] = max(0.0, budget_limit - spent)
        await _run_batch(spec, group, client, collector, batch, kwargs, error_type, run)


def _batches(
    sendable: list[tuple[GenerationJob, Produced]],
) -> list[list[tuple[GenerationJob, Produced]]]:
    """The calls: at most SERVER_BATCH cases each, of consecutive run indexes (a part's
    recorded indexes are its first index plus the case's place in the call)."""
    out: list[list[tuple[GenerationJob, Produced]]] = []
    for item in sendable:
        last = out[-1] if out else None
        if last is None or len(last) >= SERVER_BATCH or item[0].index != last[-1][0].index + 1:
            out.append([item])
        else:
            last.append(item)
    return out


async def _run_batch(
    spec: RunSpec,
    group: Group,
    client: Any,
    collector: Collector,
    batch: list[tuple[GenerationJob, Produced]],
    kwargs: dict[str, Any],
    error_type: type[Exception],
    server_run: ServerRun | None = None,
) -> None:
    cases = [_case_json(job, p.output) for job, p in batch if p.output is not None]
    if server_run is not None and server_run.in_parts:
        server_run.sent.update(job.index for job, _ in batch)
        run = server_run.run_suite(client, cases, kwargs, batch[0][0].index)
    else:
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
            code = getattr(getattr(err, "code", None), "name", "")
            title = (
                "the server cannot run the suite (set these on the server):"
                if code == "FAILED_PRECONDITION"
                else "the server refused the suite:"
            )
            raise UsageError(title, violations) from None
        raise UsageError(f"the server failed: {err}") from None
    finally:
        run.cancel()
