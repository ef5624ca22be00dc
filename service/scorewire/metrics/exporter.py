"""One server's metrics: its own registry, the parts that feed it, and the /metrics port.

Each `ServerMetrics` has its own `CollectorRegistry` (never prometheus-client's global
one), so tests can run several servers in one process and scrape each separately.
"""

from __future__ import annotations

import asyncio
import logging
import platform
import threading
from importlib import metadata
from typing import Any
from wsgiref.simple_server import WSGIServer

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Gauge,
    disable_created_metrics,
    generate_latest,
    start_http_server,
)
from scorewire.core.errors import StartupError
from scorewire.metrics.grpc_metrics import GrpcServerMetrics
from scorewire.metrics.judge_calls import JudgeMetrics
from scorewire.metrics.judge_drift import DriftMetrics
from scorewire.metrics.judge_human import AgreementMetrics
from scorewire.metrics.observe import ObserveMetrics
from scorewire.metrics.runs import RunMetrics
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2

log = logging.getLogger("scorewire.metrics")

SCORING_SERVICE = scoring_pb2.DESCRIPTOR.services_by_name["ScoringService"]


class ServerMetrics:
    """The registry of one server and everything that records into it.

    - `interceptors`: pass to `create_server(..., interceptors=...)` (gRPC metrics);
    - `observer`: pass as `create_server(..., observer=...)` (check and suite metrics);
    - `watch_judge(judge)`: mirror a `JudgeService`'s counters and budget;
    - `serve_http(host, port)`: the /metrics endpoint; `close()` stops it.
    """

    def __init__(self, *, process_metrics: bool = True) -> None:
        # prometheus-client adds a `_created` series beside every counter and histogram;
        # Go exporters do not, and they double the series count. (A process-wide switch:
        # a server process has no other registry that wants them.)
        disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = CollectorRegistry(auto_describe=True)
        """The registry /metrics serves."""
        if process_metrics:
            # The process_*, python_gc_* and python_info series every exporter has.
            for collector in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
                self.registry.register(collector)
        build = Gauge(
            "scorewire_build_info",
            "Always 1; the labels say which scorewire, Python and grpcio this server runs.",
            ("version", "python", "grpcio"),
            registry=self.registry,
        )
        build.labels(*build_labels()).set(1)
        self.grpc = GrpcServerMetrics(self.registry)
        """The gRPC interceptor (grpc_server_* series)."""
        self.grpc.preregister([SCORING_SERVICE])
        self.runs = RunMetrics(self.registry)
        """The run observer (scorewire_checks_*, scorewire_suite_*)."""
        self.judge = JudgeMetrics(self.registry)
        """The judge series (scorewire_judge_*)."""
        self.agreement = AgreementMetrics(self.registry)
        """The judge-human agreement series (scorewire_judge_agreement_*)."""
        self.drift = DriftMetrics(self.registry)
        """The judge drift series (scorewire_judge_drift*, scorewire_judge_model_changed)."""
        self.observe = ObserveMetrics(self.registry)
        """The online evaluation series (scorewire_observe_*)."""
        self._httpd: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def interceptors(self) -> tuple[GrpcServerMetrics]:
        """Server interceptors to install (put them first, so rejected calls count too)."""
        return (self.grpc,)

    @property
    def observer(self) -> RunMetrics:
        """The `RunObserver` to give the ScoringService."""
        return self.runs

    def watch_judge(self, judge: Any) -> None:
        """Export `judge`'s counters and server budget (a no-op for None)."""
        if judge is not None:
            self.judge.watch(judge)

    def scrape(self) -> bytes:
        """The exposition text /metrics would serve now."""
        return generate_latest(self.registry)

    def serve_http(self, host: str, port: int) -> int:
        """Serve /metrics on `host:port` in a background thread; returns the bound port.

        Port 0 picks a free one. Raises OSError when the port is taken.
        """
        if self._httpd is not None:
            raise RuntimeError("the metrics endpoint is already serving")
        self._httpd, self._thread = start_http_server(port, addr=host, registry=self.registry)
        bound = int(self._httpd.server_port)
        log.info("metrics on http://%s:%d/metrics", host, bound)
        return bound

    @property
    def http_port(self) -> int | None:
        """The port /metrics is served on, or None when it is not serving."""
        return None if self._httpd is None else int(self._httpd.server_port)

    def close(self) -> None:
        """Stop the /metrics endpoint (idempotent)."""
        httpd, self._httpd = self._httpd, None
        if httpd is not None:
            httpd.shutdown()
            httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    async def aclose(self) -> None:
        """`close` for `Running.closers` (which awaits each closer), off the event loop:
        stopping the HTTP server waits for its poll loop (up to half a second)."""
        await asyncio.to_thread(self.close)


def build_labels() -> tuple[str, str, str]:
    """`scorewire_build_info`'s (version, python, grpcio): installed distribution versions."""
    return _version("scorewire"), platform.python_version(), _version("grpcio")


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:  # running from a source tree without installing
        return "unknown"


def start_metrics(
    settings: Settings, *, judge: Any = None, port_offset: int = 0
) -> ServerMetrics | None:
    """Metrics for a server built from `settings`, with /metrics already serving.

    None when `settings.metrics_enabled` is false. `port_offset` shifts the port for
    the n-th worker process when several share one gRPC port (each has its own series,
    so each needs its own endpoint); a port of 0 stays 0 (a free port).
    """
    if not settings.metrics_enabled:
        return None
    metrics = ServerMetrics()
    metrics.watch_judge(judge)
    metrics.agreement.floor = settings.agreement_kappa_floor
    metrics.drift.limit = settings.judge_watch.drift_limit
    port = settings.metrics_port + port_offset if settings.metrics_port else 0
    try:
        metrics.serve_http(settings.host, port)
    except OSError as err:
        raise StartupError(
            f"the metrics port {settings.host}:{port} is not available ({err.strerror}): "
            "another server may hold it; pick another with --metrics-port or "
            "SCOREWIRE_METRICS_PORT (0 picks a free one), or turn metrics off with "
            "SCOREWIRE_METRICS_ENABLED=false"
        ) from None
    return metrics
