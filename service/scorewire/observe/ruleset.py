"""The rules a server applies: the rules file's, and those managed over gRPC.

The file's rules are loaded at start-up and cannot be changed while the server runs.
Rules created over gRPC are stored beside the observation queue (`ObservationQueue.rules`:
a table of its SQLite file or PostgreSQL database, a hash in its Redis), so every replica
applies the same ones: each reads them again every `REFRESH_S`, and at once after a
change it made itself. A stored rule is checked as the file's are, when it is created
and when it is read (a stored rule that no longer compiles here, say after a check type
was removed, is left out and logged, never applied half-way).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from scorewire.core.errors import FieldViolation, SpecError
from scorewire.observe.costs import check_rule_prices
from scorewire.observe.queue import ObservationQueue, QueueUnavailable
from scorewire.observe.rules import Rule
from scorewire.observe.wire import rule_from_pb, rule_to_pb
from scorewire.settings import Settings
from scorewire.v1 import observe_pb2 as opb

log = logging.getLogger("scorewire.observe")

REFRESH_S = 2.0
"""Seconds between two readings of the stored rules: how soon a replica applies a rule
another replica created, changed or deleted."""


class RuleConflict(Exception):
    """A rule change that does not fit the rules there are (`status`: what the RPC says)."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        """`ALREADY_EXISTS`, `NOT_FOUND` or `FAILED_PRECONDITION`."""


class RuleSet:
    """The file's rules and the stored ones, read again every `REFRESH_S`."""

    def __init__(
        self,
        file_rules: Sequence[Rule],
        queue: ObservationQueue,
        settings: Settings,
        judge: Any = None,
        *,
        managed: bool = True,
    ) -> None:
        """`managed`: rules may be stored over gRPC (False: the file's only, never read)."""
        self._file = list(file_rules)
        self._queue = queue
        self._settings = settings
        self._judge = judge
        self._managed = managed
        self._stored: list[Rule] = []
        self._bodies: dict[str, bytes] = {}
        self._read_at = -1e9

    @property
    def current(self) -> list[Rule]:
        """The rules as last read: the file's, then the stored ones by name."""
        return [*self._file, *self._stored]

    async def refresh(self, *, force: bool = False) -> list[Rule]:
        """The rules, the stored ones read again when `REFRESH_S` has passed (or `force`);
        while the store does not answer, as last read."""
        now = time.monotonic()
        if self._managed and (force or now - self._read_at >= REFRESH_S):
            self._read_at = now
            try:
                bodies = await self._queue.rules()
            except QueueUnavailable as err:  # the rules as last read stay
                log.warning("the stored evaluation rules were not read: %s", err)
                return self.current
            if bodies != self._bodies:
                self._bodies = bodies
                self._stored = [r for n, b in sorted(bodies.items()) if (r := _load(n, b))]
        return self.current

    def checked(self, message: opb.Rule, path: str = "rule") -> Rule:
        """A rule sent over gRPC, compiled and priced; SpecError naming every bad field."""
        rule = rule_from_pb(message, path)
        check_rule_prices([rule], self._settings, self._judge, [path])
        return rule

    async def create(self, message: opb.Rule) -> opb.Rule:
        """Store a new rule (RuleConflict ALREADY_EXISTS when the name is taken)."""
        rule = self.checked(message)
        if any(r.name == rule.name for r in self._file):
            raise RuleConflict("ALREADY_EXISTS", f"the rules file has a rule {rule.name!r}")
        stored = rule_to_pb(rule)
        body = stored.SerializeToString(deterministic=True)
        if not await self._queue.put_rule(rule.name, body, create=True):
            raise RuleConflict("ALREADY_EXISTS", f"a rule {rule.name!r} exists")
        await self.refresh(force=True)
        return stored

    async def update(self, message: opb.Rule) -> opb.Rule:
        """Replace a stored rule (RuleConflict NOT_FOUND, or FAILED_PRECONDITION for one of
        the rules file)."""
        rule = self.checked(message)
        self._not_the_files(rule.name)
        stored = rule_to_pb(rule)
        body = stored.SerializeToString(deterministic=True)
        if not await self._queue.put_rule(rule.name, body, create=False):
            raise RuleConflict("NOT_FOUND", f"no rule {rule.name!r} was created over gRPC")
        await self.refresh(force=True)
        return stored

    async def delete(self, name: str) -> None:
        """Remove a stored rule (RuleConflict as `update`)."""
        if not name:
            raise SpecError([FieldViolation("name", "name the rule to delete")])
        self._not_the_files(name)
        if not await self._queue.delete_rule(name):
            raise RuleConflict("NOT_FOUND", f"no rule {name!r} was created over gRPC")
        await self.refresh(force=True)

    def _not_the_files(self, name: str) -> None:
        if any(r.name == name for r in self._file):
            raise RuleConflict(
                "FAILED_PRECONDITION",
                f"the rule {name!r} is the rules file's (SCOREWIRE_OBSERVE_RULES_FILE): "
                "change it there",
            )


def _load(name: str, body: bytes) -> Rule | None:
    try:
        return rule_from_pb(opb.Rule.FromString(body), f"stored rule {name}")
    except (SpecError, ValueError) as err:
        log.warning("the stored rule %s does not compile here and is not applied: %s", name, err)
        return None
