"""A real server with online evaluation on, called through the generated stubs."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass

import grpc
from prometheus_client import CollectorRegistry
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe.consumer import Observing
from scorewire.observe.queue import ObservationQueue
from scorewire.observe.rules import Rule, parse_rules
from scorewire.runs import RunStore
from scorewire.server.app import Running, create_server
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc, runs_pb2_grpc


@dataclass
class ObserveServer:
    running: Running
    channel: grpc.aio.Channel
    observe: observe_pb2_grpc.ObserveServiceStub
    runs: runs_pb2_grpc.RunServiceStub
    registry: CollectorRegistry

    def metric(self, name: str, **labels: str) -> float:
        """A sample's value (0 when the series does not exist yet)."""
        return self.registry.get_sample_value(name, labels) or 0.0


@asynccontextmanager
async def observe_server(
    queue: ObservationQueue,
    rules: Sequence[Rule] | None = None,
    *,
    runs: RunStore | None = None,
    consume: bool = True,
    judge: object = None,
    **settings: object,
) -> AsyncIterator[ObserveServer]:
    """A server on a free port queueing into `queue`, scoring by `rules` into `runs`
    (default: one rule scoring everything with `contains`; `()` loads none)."""
    if rules is None:
        rules = parse_rules({"rules": [{"name": "all", "compact": ["contains:Paris"]}]})
    registry = CollectorRegistry()
    observing = Observing(queue, rules, ObserveMetrics(registry), consume=consume)
    config = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **settings)  # type: ignore[arg-type]
    running, port = await create_server(config, runs=runs, observing=observing, judge=judge)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield ObserveServer(
            running,
            channel,
            observe_pb2_grpc.ObserveServiceStub(channel),
            runs_pb2_grpc.RunServiceStub(channel),
            registry,
        )
    finally:
        await channel.close()
        await running.stop(0)


def observation(text: str, *, trace: str = "", oid: str = "", route: str = "/c") -> opb.Observation:
    """An observation of `text` on `route`."""
    o = opb.Observation(observation_id=oid)
    o.output.text = text
    o.sample.input.string_value = "capital of France?"
    o.trace.trace_id = trace
    o.metadata.route = route
    o.metadata.labels["env"] = "prod"
    return o
