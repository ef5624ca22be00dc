"""A real OTLP/gRPC receiver for tests: the collector's trace and logs services, in process.

    with OtlpReceiver() as otlp:                      # 127.0.0.1, a free port
        env = {"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint}   # http://127.0.0.1:<port>
        ...
        spans = otlp.wait_for(lambda spans: any(s.name == "x" for s in spans))

It implements `opentelemetry.proto.collector.trace.v1.TraceService/Export` and
`...logs.v1.LogsService/Export` from the `opentelemetry-proto` package, so exporters talk
to it exactly as to a collector, and keeps every span it receives as a `ReceivedSpan` and
every log record (events included) as a `ReceivedLog` (`logs()`, `wait_for_logs`). Put
a proxy in front of it or of the server and only the addresses change.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2, logs_service_pb2_grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc

from tests.support.wait import wait_until


@dataclass(frozen=True)
class ReceivedSpan:
    """One exported span, ids as lowercase hex (the parent's is empty for a root)."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    service: str


@dataclass(frozen=True)
class ReceivedLog:
    """One exported log record (an event has an `event_name`), ids as lowercase hex (empty
    when the record has none)."""

    event_name: str
    trace_id: str
    span_id: str
    attributes: dict[str, Any]
    service: str
    scope: str


def _value(v: Any) -> Any:
    which = v.WhichOneof("value")
    return getattr(v, which) if which else None


def _attrs(kvs: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in kvs}


class _Service(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, receiver: OtlpReceiver) -> None:
        self._receiver = receiver

    def Export(self, request: Any, context: Any) -> Any:
        received = []
        for rs in request.resource_spans:
            service = str(_attrs(rs.resource.attributes).get("service.name", ""))
            for ss in rs.scope_spans:
                for s in ss.spans:
                    received.append(
                        ReceivedSpan(
                            name=s.name,
                            trace_id=s.trace_id.hex(),
                            span_id=s.span_id.hex(),
                            parent_span_id=s.parent_span_id.hex(),
                            kind=s.kind,
                            attributes=_attrs(s.attributes),
                            events=[(e.name, _attrs(e.attributes)) for e in s.events],
                            service=service,
                        )
                    )
        with self._receiver._lock:
            self._receiver._spans.extend(received)
        return trace_service_pb2.ExportTraceServiceResponse()


class _LogsService(logs_service_pb2_grpc.LogsServiceServicer):
    def __init__(self, receiver: OtlpReceiver) -> None:
        self._receiver = receiver

    def Export(self, request: Any, context: Any) -> Any:
        received = []
        for rl in request.resource_logs:
            service = str(_attrs(rl.resource.attributes).get("service.name", ""))
            for sl in rl.scope_logs:
                for r in sl.log_records:
                    received.append(
                        ReceivedLog(
                            event_name=r.event_name,
                            trace_id=r.trace_id.hex(),
                            span_id=r.span_id.hex(),
                            attributes=_attrs(r.attributes),
                            service=service,
                            scope=sl.scope.name,
                        )
                    )
        with self._receiver._lock:
            self._receiver._logs.extend(received)
        return logs_service_pb2.ExportLogsServiceResponse()


class OtlpReceiver:
    """The TraceService and LogsService on 127.0.0.1 (a free port); `spans()` and `logs()`
    are what arrived so far."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self._logs: list[ReceivedLog] = []
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(_Service(self), self._server)
        logs_service_pb2_grpc.add_LogsServiceServicer_to_server(_LogsService(self), self._server)
        self.port = self._server.add_insecure_port("127.0.0.1:0")

    @property
    def endpoint(self) -> str:
        """`http://127.0.0.1:<port>`: what OTEL_EXPORTER_OTLP_ENDPOINT is set to."""
        return f"http://127.0.0.1:{self.port}"

    def spans(self) -> list[ReceivedSpan]:
        """Every span received so far."""
        with self._lock:
            return list(self._spans)

    def wait_for(
        self, condition: Callable[[list[ReceivedSpan]], bool], what: str, timeout_s: float = 30
    ) -> list[ReceivedSpan]:
        """Poll until `condition(spans)` holds; the spans then."""
        return wait_until(
            lambda: (lambda spans: spans if condition(spans) else None)(self.spans()),
            what,
            timeout_s=timeout_s,
        )

    def logs(self) -> list[ReceivedLog]:
        """Every log record received so far."""
        with self._lock:
            return list(self._logs)

    def wait_for_logs(
        self, condition: Callable[[list[ReceivedLog]], bool], what: str, timeout_s: float = 30
    ) -> list[ReceivedLog]:
        """Poll until `condition(logs)` holds; the log records then."""
        return wait_until(
            lambda: (lambda logs: logs if condition(logs) else None)(self.logs()),
            what,
            timeout_s=timeout_s,
        )

    def __enter__(self) -> OtlpReceiver:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.stop(0)
