"""Prometheus metrics of a scorewire server: gRPC, checks, suites and the judge.

`start_metrics(settings, judge=...)` builds a `ServerMetrics` (its own registry) and
serves /metrics on `settings.metrics_port`; its `interceptors` and `observer` go to
`create_server`. Names follow Prometheus' rules: base units (seconds, US dollars),
`_total` on counters, and no label that varies per sample or prompt.
"""

from scorewire.metrics.exporter import ServerMetrics, start_metrics
from scorewire.metrics.grpc_metrics import GrpcServerMetrics
from scorewire.metrics.judge_calls import JudgeMetrics
from scorewire.metrics.judge_human import AgreementMetrics
from scorewire.metrics.runs import RunMetrics

__all__ = [
    "AgreementMetrics",
    "GrpcServerMetrics",
    "JudgeMetrics",
    "RunMetrics",
    "ServerMetrics",
    "start_metrics",
]
