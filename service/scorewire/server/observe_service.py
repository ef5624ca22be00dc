"""The ObserveService handlers: check a batch, queue it durably, list and manage the rules.

A batch is checked whole before anything is queued (`observe.wire.checked_batch`:
INVALID_ARGUMENT naming every bad field), then queued in one write: whole or not at all
(a full queue is RESOURCE_EXHAUSTED naming `SCOREWIRE_OBSERVE_QUEUE_MAX`, a tenant's
full share of it `SCOREWIRE_OBSERVE_QUEUE_MAX_PER_TENANT`). Rules are changed by admin
tokens only, through `observe.ruleset.RuleSet`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

import grpc
from scorewire.core.errors import FieldViolation
from scorewire.metrics.observe import ObserveMetrics
from scorewire.observe.queue import ObservationQueue, QueueFull, QueueUnavailable
from scorewire.observe.ruleset import RuleConflict, RuleSet
from scorewire.observe.wire import checked_batch, queue_id, rule_to_pb
from scorewire.server.registration import add_service
from scorewire.server.security import Principal, Role, principal
from scorewire.server.status import (
    RequestRejected,
    guarded_unary,
    permission_denied,
    resource_exhausted,
)
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb
from scorewire.v1 import observe_pb2_grpc as opb_grpc

Context = grpc.aio.ServicerContext[Any, Any]


class ObserveService(opb_grpc.ObserveServiceServicer):
    """scorewire.v1.ObserveService on grpc.aio."""

    def __init__(
        self,
        settings: Settings,
        queue: ObservationQueue,
        rules: RuleSet,
        metrics: ObserveMetrics | None = None,
    ) -> None:
        self._max_output = settings.max_output_bytes
        self._queue = queue
        self._rules = rules
        self._metrics = metrics

    @guarded_unary
    async def Observe(self, request: opb.ObserveRequest, context: Context) -> opb.ObserveResponse:
        """Check the batch, then queue it whole; one ack per observation."""
        if not await self._rules.refresh():
            # Acknowledged would promise a score no rule can give: the consumer would take
            # the observation and drop it.
            raise RequestRejected(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no evaluation rules are loaded (SCOREWIRE_OBSERVE_RULES_FILE) or created "
                "(CreateRule): nothing would score these observations",
            )
        batch = checked_batch(request, self._max_output)
        _stamp_tenant(batch, principal(context))
        items = [(queue_id(o), o.SerializeToString(deterministic=True)) for o in batch]
        try:
            queued = await self._queue.put(items, [o.metadata.tenant for o in batch])
        except QueueFull as err:
            raise resource_exhausted("observations", str(err)) from None
        except QueueUnavailable as err:
            raise RequestRejected(grpc.StatusCode.UNAVAILABLE, str(err)) from None
        out = opb.ObserveResponse()
        for i, (obs, ok) in enumerate(zip(batch, queued, strict=True)):
            status = opb.OBSERVATION_STATUS_QUEUED if ok else opb.OBSERVATION_STATUS_DUPLICATE
            out.acks.add(index=i, observation_id=obs.observation_id, status=status)
        if self._metrics is not None:
            n = sum(queued)
            self._metrics.queued.labels("queued").inc(n)
            self._metrics.queued.labels("duplicate").inc(len(queued) - n)
        return out

    @guarded_unary
    async def ListRules(
        self, request: opb.ListRulesRequest, context: Context
    ) -> opb.ListRulesResponse:
        """The rules: the file's in order, then the stored ones by name."""
        return opb.ListRulesResponse(rules=[rule_to_pb(r) for r in await self._rules.refresh()])

    @guarded_unary
    async def CreateRule(
        self, request: opb.CreateRuleRequest, context: Context
    ) -> opb.CreateRuleResponse:
        """Store a new rule (admin tokens only)."""
        _admin_only(context)
        with _conflicts():
            return opb.CreateRuleResponse(rule=await self._rules.create(request.rule))

    @guarded_unary
    async def UpdateRule(
        self, request: opb.UpdateRuleRequest, context: Context
    ) -> opb.UpdateRuleResponse:
        """Replace a stored rule (admin tokens only)."""
        _admin_only(context)
        with _conflicts():
            return opb.UpdateRuleResponse(rule=await self._rules.update(request.rule))

    @guarded_unary
    async def DeleteRule(
        self, request: opb.DeleteRuleRequest, context: Context
    ) -> opb.DeleteRuleResponse:
        """Remove a stored rule (admin tokens only)."""
        _admin_only(context)
        with _conflicts():
            await self._rules.delete(request.name)
        return opb.DeleteRuleResponse()


def _admin_only(context: Context) -> None:
    who = principal(context)
    if who is not None and who.role != Role.ADMIN:
        raise RequestRejected(
            grpc.StatusCode.PERMISSION_DENIED, "only admin tokens manage evaluation rules"
        )


@contextlib.contextmanager
def _conflicts() -> Iterator[None]:
    """A rule change the rules there are refuse, as its status."""
    try:
        yield
    except RuleConflict as err:
        raise RequestRejected(getattr(grpc.StatusCode, err.status), str(err)) from None
    except QueueUnavailable as err:
        raise RequestRejected(grpc.StatusCode.UNAVAILABLE, str(err)) from None


def _stamp_tenant(batch: Sequence[opb.Observation], who: Principal | None) -> None:
    """With tokens on, an observation's tenant is its caller's (written where unset): it
    decides the share of the workers, the budgets and whose runs hold the scores. Naming
    another tenant is PERMISSION_DENIED, except for an admin token (a gateway observing
    for the tenants behind it). With auth off the metadata is taken as sent."""
    if who is None:
        return
    denied = []
    for i, obs in enumerate(batch):
        claimed = obs.metadata.tenant
        if not claimed:
            obs.metadata.tenant = who.name
        elif claimed != who.name and who.role != Role.ADMIN:
            where = f"observations[{i}].metadata.tenant"
            denied.append(FieldViolation(where, f"the token's tenant is {who.name!r}"))
    if denied:
        raise permission_denied(denied)


def add_observe_service(
    server: Any,
    settings: Settings,
    queue: ObservationQueue,
    rules: RuleSet,
    metrics: ObserveMetrics | None = None,
) -> str:
    """Register an ObserveService on `server`; returns its full name."""
    service = ObserveService(settings, queue, rules, metrics)
    return add_service(server, service, opb.DESCRIPTOR.services_by_name["ObserveService"])
