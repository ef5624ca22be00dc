"""Building and running the gRPC server: `create_server` for tests, `serve` for main.

`create_server(settings)` binds (port 0 picks a free port) and returns the server and
its port, so tests talk to it over a real channel. `serve` adds what a deployment
needs: custom-check imports, signal handling and graceful shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import scorewire.checks  # noqa: F401 - registers the built-in check types
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_health.v1._async import HealthServicer
from scorewire.core import memory
from scorewire.core.errors import SpecError, StartupError
from scorewire.core.logs import configure_logging
from scorewire.engine.custom import load_imports
from scorewire.jobs import JobStore, JobsUnavailable, open_job_store
from scorewire.jobs.job_runner import JobRunner
from scorewire.jobs.webhook import Webhooks
from scorewire.judge import JudgeService
from scorewire.labels import LabelsUnavailable, open_label_store
from scorewire.metrics import start_metrics
from scorewire.observe import evaluation_events
from scorewire.observe.consumer import ObserveConsumer, Observing
from scorewire.observe.opening import QUEUE_FILE, open_queue, rules_from_settings
from scorewire.observe.queue import QueueUnavailable
from scorewire.observe.ruleset import RuleSet
from scorewire.runs import DriftWatch, RunRecorder, RunStore, RunsUnavailable, open_run_store
from scorewire.scoring.recorded import CODEC
from scorewire.server.chosen import chosen
from scorewire.server.decoding import DecodeGuard
from scorewire.server.grpc_logs import quiet_late_writes
from scorewire.server.jobs_service import add_job_service
from scorewire.server.labels_service import CallerScopedLabels, add_label_service
from scorewire.server.observe_service import add_observe_service
from scorewire.server.observer import RunObserver
from scorewire.server.otlp import start_tracing, tracing_endpoint
from scorewire.server.reflection import add_reflection
from scorewire.server.registration import StaticInterceptor, WrappingServer, add_service, chained
from scorewire.server.run_records import visible_tenant
from scorewire.server.runs_service import add_run_service
from scorewire.server.scoring_service import ScoringService
from scorewire.server.security import (
    auth_interceptor,
    principals_from_settings,
    server_credentials,
)
from scorewire.settings import Settings
from scorewire.text.embeddings import EmbeddingsClient
from scorewire.v1 import scoring_pb2
from scorewire.viewer.reviews import Reviews
from scorewire.viewer.serving import start_viewer
from scorewire.viewer.store import store_source_for

log = logging.getLogger("scorewire.server")

SERVICE_NAME = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"].full_name


@dataclass(slots=True)
class Running:
    """A started server and the parts that shutdown needs."""

    server: grpc.aio.Server
    port: int
    health: HealthServicer
    service: ScoringService
    closers: list[Any] = field(default_factory=list)

    async def stop(self, grace_s: float | None) -> None:
        """Turn health NOT_SERVING, refuse new calls, let in-flight calls finish."""
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace_s)
        await self.service.close()
        for close in self.closers:
            with contextlib.suppress(Exception):
                await close()


def grpc_options(settings: Settings) -> list[tuple[str, Any]]:
    """Channel options for message sizes and keepalive."""
    return [
        ("grpc.max_receive_message_length", settings.max_message_bytes),
        ("grpc.max_send_message_length", settings.max_message_bytes),
        ("grpc.keepalive_time_ms", int(settings.keepalive_time_s * 1000)),
        ("grpc.keepalive_timeout_ms", int(settings.keepalive_timeout_s * 1000)),
        ("grpc.http2.min_ping_interval_without_data_ms", 5000),
        # Accept client keepalive pings every 10 s on idle streams (a slow judge can keep
        # a stream quiet for minutes); the default would answer them with GOAWAY.
        ("grpc.http2.min_recv_ping_interval_without_data_ms", 10000),
        ("grpc.http2.max_ping_strikes", 0),
        ("grpc.keepalive_permit_without_calls", 1),
        ("grpc.so_reuseport", 1 if settings.workers > 1 else 0),
    ]


async def create_server(
    settings: Settings,
    *,
    judge: Any = None,
    labels: Any = None,
    observer: RunObserver | None = None,
    extras: dict[str, Any] | None = None,
    interceptors: Sequence[Any] = (),
    agreement_observer: Any = None,
    drift_observer: Any = None,
    runs: RunStore | None = None,
    observing: Observing | None = None,
    jobs: JobStore | None = None,
) -> tuple[Running, int]:
    """Build, bind and start the server; returns it and the bound port.

    With `runs` (a run store), calls can be recorded and the RunService reads them; the
    server owns the store from then on and closes it when it stops.
    `agreement_observer` receives the latest kappa of every Agreement, and `drift_observer`
    the judge drift of every completed recorded run against its name's previous run.
    With `observing`, the ObserveService queues observations and a consumer scores them by
    the rules, recording into `runs`; the server owns and closes its queue.
    With `jobs` (a job store) and `runs`, the JobService takes evaluation jobs and this
    process's runners score them into `runs`; the server owns and closes the store.
    """
    quiet_late_writes()  # a caller that cancels mid-write is no server error
    auth = auth_interceptor(settings)
    # Metrics (passed in) come first so that calls auth rejects are counted too; the
    # decode guard comes after auth, so a caller without a token learns nothing more.
    chain = [*interceptors, *([auth] if auth is not None else []), DecodeGuard()]
    static = all(isinstance(i, StaticInterceptor) for i in chain)
    # When every link only wraps a method's handler the same way for every call (the
    # default: metrics and the decode guard), they wrap it once, at registration, and
    # grpc.aio runs no interceptor per call (see `WrappingServer`).
    server = grpc.aio.server(options=grpc_options(settings), interceptors=None if static else chain)
    target: Any = WrappingServer(server, chained(chain)) if static else server
    # human checks in Score and RunSuite read the caller's tenant's labels only.
    scoped = CallerScopedLabels(labels) if labels is not None else None
    recorder = None
    if runs is not None:
        recorder = RunRecorder(
            runs,
            queue_chunks=settings.runs_queue_chunks,
            heartbeat_s=settings.runs_heartbeat_s,
            max_age_s=settings.runs_max_age_s,
            max_runs=settings.runs_max_runs,
            on_finish=DriftWatch(CODEC, drift_observer.observe_drift).finished
            if drift_observer is not None
            else None,
        )
        await recorder.start()
    service = ScoringService(
        settings, judge=judge, labels=scoped, observer=observer, extras=extras, runs=recorder
    )
    await service.start()
    add_service(
        target,
        service,
        scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"],
        raw=frozenset(("RunSuite", "RunSuiteStream")),
        screen=service.request_screen,
    )
    health_servicer = HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, target)
    names = [SERVICE_NAME]
    if labels is not None:
        names.append(
            add_label_service(
                target,
                labels,
                scorer=service,
                observer=agreement_observer,
                max_resamples=settings.max_bootstrap_resamples,
                recorder=recorder,
                max_cases=settings.max_agreement_cases,
                max_thresholds=settings.max_calibration_thresholds,
            )
        )
    if recorder is not None:
        names.append(add_run_service(target, recorder, service.suites.parts))
    consumer = None
    if observing is not None:
        try:
            await observing.queue.start()
        except QueueUnavailable as err:  # Redis down: Observe answers UNAVAILABLE until it is up
            log.warning("%s: observations are not queued until it answers", err)
        rules = RuleSet(
            observing.rules, observing.queue, settings, judge, managed=observing.managed
        )
        metrics = observing.metrics
        names.append(add_observe_service(target, settings, observing.queue, rules, metrics))
        if observing.consume:
            consumer = ObserveConsumer(
                observing.queue,
                rules,
                service.executor,
                judge=judge,
                recorder=recorder,
                metrics=observing.metrics,
            )
    runner = None
    if jobs is not None and recorder is not None:
        names.append(add_job_service(target, settings, jobs, service))
        runner = JobRunner(
            settings,
            jobs,
            service.executor,
            recorder,
            service.calls.background,
            _webhooks(settings),
        )
    add_reflection(target, (*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name))
    address = f"{settings.host}:{settings.port}"
    creds = server_credentials(settings)
    try:
        if creds is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, creds)
    except RuntimeError:  # grpc's "Failed to bind to address"
        port = 0
    if port == 0:
        raise StartupError(
            f"the gRPC port {address} is not available: another server may hold it; "
            "pick another with --port or SCOREWIRE_PORT"
        )
    await server.start()
    serving = health_pb2.HealthCheckResponse.SERVING
    await health_servicer.set("", serving)
    for name in names:
        await health_servicer.set(name, serving)
    running = Running(server, port, health_servicer, service)
    if consumer is not None:
        consumer.start()
        running.closers.append(consumer.close)  # before the recorder: it finishes its runs
    if runner is not None:
        runner.start()
        running.closers.append(runner.close)  # before the recorder: a chunk may be storing
    if jobs is not None:
        running.closers.append(jobs.close)
    if observing is not None:
        running.closers.append(observing.queue.close)
    if recorder is not None:
        running.closers.append(recorder.close)
    return running, port


async def serve(settings: Settings, *, ready_line: bool = True, worker: int = 0) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    if settings.imports:
        load_imports(settings.imports)
    if worker == 0:
        warning = per_process_state_warning(settings)
        if warning is not None:
            log.warning("%s", warning)
    judge = JudgeService.from_settings(settings)
    if worker == 0:
        why = await judge.cache.unreachable()
        if why is not None:
            log.warning(
                "the verdict cache at %s does not answer (%s): judge verdicts are neither "
                "kept nor shared until it does; check SCOREWIRE_CACHE_URL",
                judge.cache.description,
                why,
            )
    embeddings = EmbeddingsClient.from_settings(settings)
    try:
        labels = await open_label_store(settings)
    except LabelsUnavailable as err:
        raise StartupError(str(err)) from None
    try:
        rules = rules_from_settings(settings, judge)
    except SpecError as err:
        await labels.close()
        raise StartupError(f"the evaluation rules do not load: {err}") from None
    try:
        queue = open_queue(settings)
    except StartupError:
        await labels.close()
        raise
    try:
        runs = await open_run_store(settings)
        jobs = await open_job_store(settings)
    except (RunsUnavailable, JobsUnavailable) as err:
        await labels.close()
        raise StartupError(str(err)) from None
    # Each worker serves its own /metrics (port + worker index): series are per process.
    metrics = start_metrics(settings, judge=judge, port_offset=worker)
    # One viewer per server: the first worker serves it (they would share its port).
    # It shows the run store's runs, read on this loop from the viewer's threads.
    viewer = None
    if worker == 0:
        source_for = store_source_for(
            runs,
            asyncio.get_running_loop(),
            visible_tenant,
            timeout_s=settings.viewer_request_timeout_s,
        )
        reviews = Reviews(
            labels, asyncio.get_running_loop(), timeout_s=settings.viewer_request_timeout_s
        )
        viewer = start_viewer(settings, principals_from_settings(settings), source_for, reviews)
    # Tracing first: the RPC's span is the parent of everything else it does.
    traced = start_tracing()
    events = evaluation_events.start_evaluation_events(
        tracing_endpoint(),
        judge_model=settings.judge_model,
        dropped_counter=metrics.observe.events_dropped if metrics is not None else None,
    )
    evaluation_events.install(events)
    interceptors = [
        *([traced.interceptor] if traced is not None else []),
        *(metrics.interceptors if metrics is not None else ()),
    ]
    running, port = await create_server(
        settings,
        judge=judge,
        labels=labels,
        extras={"embeddings": embeddings} if embeddings is not None else None,
        observer=metrics.observer if metrics is not None else None,
        interceptors=interceptors,
        agreement_observer=metrics.agreement if metrics is not None else None,
        drift_observer=metrics.drift if metrics is not None else None,
        runs=runs,
        observing=Observing(queue, rules, metrics.observe if metrics is not None else None),
        jobs=jobs,
    )
    running.closers.extend([labels.close, judge.aclose])
    if traced is not None:
        running.closers.append(traced.aclose)
    if events is not None:  # after the consumer's closer: its last scores are sent
        running.closers.append(events.aclose)
    # Modules, registry and settings live as long as the process: out of every collection,
    # so that a full collection does not pause the event loop over them.
    gc.freeze()
    # Memory a big request freed goes back to the system (core/memory.py).
    trimming = asyncio.create_task(memory.Trimmer().run(), name="scorewire-trimmer")
    running.closers.append(functools.partial(memory.stop, trimming))
    if metrics is not None:
        running.closers.append(metrics.aclose)
    if viewer is not None:
        # First: no page is left reading a store that has been closed.
        running.closers.insert(0, viewer.aclose)
    if ready_line:
        # Tests and scripts wait for this line to learn the port.
        print(f"scorewire listening on {settings.host}:{port}", flush=True)
    pool = running.service.executor.pool
    log.info(
        "serving on %s:%d (pid %d): %s",
        settings.host,
        port,
        os.getpid(),
        chosen(
            settings,
            scoring_workers=pool.size if pool is not None else 0,
            tokens=len(principals_from_settings(settings)),
            cache=judge.cache.description,
            queue=queue.description,
        ),
    )
    log.info("online evaluation: %d rules from the rules file", len(rules))
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    log.info("shutting down: %.1f s grace for in-flight calls", settings.grace_period_s)
    await running.stop(settings.grace_period_s)


def _webhooks(settings: Settings) -> Webhooks | None:
    """What sends jobs' completion webhooks; None without a secret to sign them with."""
    secret = settings.jobs_webhook_secret
    if secret is None:
        return None
    return Webhooks(
        secret.get_secret_value().encode(),
        attempts=settings.jobs_webhook_attempts,
        timeout_s=settings.jobs_webhook_timeout_s,
    )


def per_process_state_warning(settings: Settings) -> str | None:
    """The start-up warning of a server that is one of several processes while a store
    they should share is a SQLite file of its own, else None: labels with several
    processes or replicas; recorded runs, jobs and the observation queue with several
    replicas (worker processes on one host share those files)."""
    processes = max(settings.workers, settings.replicas)
    local = [
        f"{name} ({path})"
        for name, url, path, shared_on_host in (
            ("labels", settings.labels_url, settings.labels_file(), False),
            ("runs", settings.runs_url, settings.runs_file(), True),
            ("jobs", settings.database_url, settings.state_path() / settings.jobs_path, True),
            ("observe queue", settings.observe_queue_url, settings.state_path() / QUEUE_FILE, True),
        )
        if url is None and (settings.replicas > 1 or not shared_on_host)
    ]
    if processes <= 1 or not local:
        return None
    why = (
        f"--workers {settings.workers}"
        if settings.workers > 1
        else f"SCOREWIRE_REPLICAS={settings.replicas}"
    )
    return (
        f"{why}, but these stores are SQLite files of this process: {', '.join(local)}; "
        "each process keeps its own, so what one writes another does not read; set "
        "SCOREWIRE_DATABASE_URL to a PostgreSQL database shared by all of them"
        + (
            " (and SCOREWIRE_OBSERVE_QUEUE_URL to it, or to a Redis, for the observe queue)"
            if any(item.startswith("observe queue") for item in local)
            else ""
        )
    )


def run_workers(settings: Settings) -> int:
    """Run `settings.workers` server processes sharing the port (SO_REUSEPORT)."""
    import multiprocessing

    if settings.port == 0:
        print("--workers needs a fixed --port: each worker must bind the same one", file=sys.stderr)
        return 2
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_worker_main, args=(settings, i), daemon=False)
        for i in range(settings.workers)
    ]
    for p in procs:
        p.start()

    def forward(signum: int, _frame: object) -> None:
        for p in procs:
            if p.pid is not None and p.is_alive():
                os.kill(p.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    for p in procs:
        p.join()
    return max((p.exitcode or 0) for p in procs)


def _worker_main(settings: Settings, index: int) -> None:
    configure_logging(settings.log_level)
    try:
        asyncio.run(serve(settings, ready_line=index == 0, worker=index))
    except StartupError as err:
        print(f"scorewire serve: worker {index}: {err}", file=sys.stderr)
        sys.exit(2)
