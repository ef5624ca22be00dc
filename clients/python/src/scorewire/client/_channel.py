"""Channel defaults shared by the sync and asyncio clients."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Sequence
from typing import Any

from scorewire.v1 import jobs_pb2_grpc, labels_pb2_grpc, runs_pb2_grpc, scoring_pb2_grpc

DEFAULT_TIMEOUT_S = 30.0
"""Deadline of a Score, RunSuite, ListChecks or ValidateSuite call unless one is given."""

DEFAULT_KEEPALIVE_S = 30.0
"""Seconds between keepalive pings while calls are open: 30 s in every scorewire
client, the server's own `keepalive_time_s`. The server allows one every 5 s
(`grpc.http2.min_ping_interval_without_data_ms`)."""

DEFAULT_KEEPALIVE_TIMEOUT_S = 10.0
"""Seconds to wait for a ping's ack before the connection is considered dead."""

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""Largest message sent or received; matches the server's default limit."""

# Schemes gRPC resolves itself; anything else (`host:port`) goes through DNS.
_SCHEMES = ("dns:", "unix:", "unix-abstract:", "ipv4:", "ipv6:", "vsock:", "xds:")


def trace_metadata() -> tuple[tuple[str, str], ...]:
    """The caller's trace context (W3C `traceparent`, `tracestate`) as call metadata.

    Through the OpenTelemetry API's global propagator when `opentelemetry-api` is
    installed (`pip install 'scorewire-client[tracing]'`) and the caller is in a span;
    nothing otherwise, so the server's spans join the caller's trace.
    """
    if _propagate is None:
        return ()
    carrier: dict[str, str] = {}
    _propagate.inject(carrier)
    return tuple(carrier.items())


try:
    from opentelemetry import propagate as _propagate
except ImportError:  # tracing is optional
    _propagate = None  # type: ignore[assignment]


SERVICE = "scorewire.v1.ScoringService"
LABEL_SERVICE = "scorewire.v1.LabelService"

PUT_LABELS_RETRY = {
    "maxAttempts": 3,
    "initialBackoff": "0.2s",
    "maxBackoff": "2s",
    "backoffMultiplier": 2,
    "retryableStatusCodes": ["UNAVAILABLE"],
}
"""gRPC's own retry of PutLabels on UNAVAILABLE. A retry resends the same message, so
the same `request_id`, which the server stores at most once."""

SCORING_RETRY = PUT_LABELS_RETRY
"""gRPC's own retry of Score, RunSuite, RunSuiteStream, ListChecks and ValidateSuite on
UNAVAILABLE (a replica lost, a proxy answering 502 for it): the call is sent again, to
another replica as round_robin (or the proxy) picks it. gRPC retries only until the first
response message arrives, and only while what the call has sent fits its retry buffer
(`grpc.per_rpc_retry_buffer_size`, 256 KiB by default): a RunSuite whose stream breaks
later, or a big RunSuite or RunSuiteStream, is not retried here (a sharded run retries
its chunk; `scorewire.client._shards`). Scoring is idempotent; a Score retried after its
replica called a judge model may pay for that call twice."""
RETRIED_SCORING_METHODS = ("Score", "RunSuite", "RunSuiteStream", "ListChecks", "ValidateSuite")


def normalize_target(target: str | Sequence[str]) -> str:
    """`host:port` becomes `dns:///host:port`, so that round_robin sees every address
    the name resolves to; targets with a scheme are kept as given. A list of
    `ip:port` addresses (`["127.0.0.1:5001", "[::1]:5002"]`) becomes one static target
    (`ipv4:a,b` / `ipv6:a,b`), balanced round-robin over all of them."""
    if not isinstance(target, str):
        return addresses_target(target)
    if target.startswith(_SCHEMES):
        return target
    return f"dns:///{target}"


def addresses_target(addresses: Sequence[str]) -> str:
    """The gRPC target of a fixed list of IP literal addresses, all IPv4 or all IPv6.

    Raises ValueError naming the first address that is not `ip:port` (a name would need
    a resolver: give one `host:port` instead, resolved through DNS)."""
    if not addresses:
        raise ValueError("target: the list of addresses is empty")
    families = set()
    for i, address in enumerate(addresses):
        host, sep, port = address.rpartition(":")
        try:
            ip = ipaddress.ip_address(host.removeprefix("[").removesuffix("]"))
        except ValueError:
            ip = None
        if not sep or ip is None or not port.isdigit():
            raise ValueError(f"target[{i}]: {address!r} is not an ip:port address")
        families.add(ip.version)
    if len(families) > 1:
        raise ValueError("target: mix of IPv4 and IPv6 addresses; give one family")
    scheme = "ipv4" if families == {4} else "ipv6"
    return f"{scheme}:{','.join(addresses)}"


def service_config() -> str:
    """The default service config: round-robin over every resolved address; PutLabels
    (safe: the retry carries the same request_id) and the scoring calls but ScoreStream
    retried on UNAVAILABLE."""
    return json.dumps(
        {
            "loadBalancingConfig": [{"round_robin": {}}],
            "methodConfig": [
                {
                    "name": [{"service": LABEL_SERVICE, "method": "PutLabels"}],
                    "retryPolicy": PUT_LABELS_RETRY,
                },
                {
                    "name": [{"service": SERVICE, "method": m} for m in RETRIED_SCORING_METHODS],
                    "retryPolicy": SCORING_RETRY,
                },
            ],
        }
    )


def channel_options(
    keepalive_s: float,
    keepalive_timeout_s: float,
    extra: Sequence[tuple[str, Any]] = (),
) -> list[tuple[str, Any]]:
    """Channel arguments: service config, keepalive and message limits; an entry of
    `extra` replaces the default of the same name."""
    options: dict[str, Any] = {
        "grpc.service_config": service_config(),
        "grpc.keepalive_time_ms": int(keepalive_s * 1000),
        "grpc.keepalive_timeout_ms": int(keepalive_timeout_s * 1000),
        # Ping only while calls are open: an idle channel needs no keepalive, and
        # servers reject pings without calls by default.
        "grpc.keepalive_permit_without_calls": 0,
        "grpc.max_send_message_length": MAX_MESSAGE_BYTES,
        "grpc.max_receive_message_length": MAX_MESSAGE_BYTES,
    }
    options.update(extra)
    return list(options.items())


def stub(channel: Any) -> Any:
    """The generated ScoringService stub (untyped: grpc's plugin writes no type hints)."""
    return scoring_pb2_grpc.ScoringServiceStub(channel)


def label_stub(channel: Any) -> Any:
    """The generated LabelService stub."""
    return labels_pb2_grpc.LabelServiceStub(channel)


def run_stub(channel: Any) -> Any:
    """The generated RunService stub."""
    return runs_pb2_grpc.RunServiceStub(channel)


def job_stub(channel: Any) -> Any:
    """The generated JobService stub."""
    return jobs_pb2_grpc.JobServiceStub(channel)
