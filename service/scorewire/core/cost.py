"""A request's cost, measured while it loads and refused before it is paid.

A `RequestMeter` carries the limits of one request (setting name -> most allowed) and
what the request has used so far. The loader makes it current (`metering`) while the
request's checks compile; whoever knows a cost charges it before paying it: the engine
charges what a check's raw parameters cost (patterns, needles, schema size, language
codes, the name), the regex engine charges each pattern and caps RE2's compile memory by
what is left. Going over a limit raises `LimitExceeded` naming the setting, which the
server answers RESOURCE_EXHAUSTED. Without a current meter nothing is counted: the
in-process API and the CLI compile as before unless they choose to meter.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Mapping
from contextvars import ContextVar


class LimitExceeded(Exception):
    """A request costs more than the setting `setting` allows; `field` says where."""

    def __init__(self, setting: str, field: str, message: str) -> None:
        super().__init__(message)
        self.setting = setting
        self.field = field
        self.message = message


class RequestMeter:
    """The limits of one request and what it has used of each (by setting name)."""

    __slots__ = ("_distinct", "limits", "specs_measured", "used")

    def __init__(self, limits: Mapping[str, int]) -> None:
        self.limits = dict(limits)
        self.used: dict[str, int] = {}
        self._distinct: dict[str, set[str]] = {}
        self.specs_measured = False
        """Set once every spec of the request has been charged up front."""

    def charge(self, setting: str, amount: int, field: str, what: str) -> None:
        """Add `amount` of `what` to the count under `setting`; raise when over its limit."""
        limit = self.limits.get(setting)
        if limit is None:
            return
        total = self.used.get(setting, 0) + amount
        self.used[setting] = total
        if total > limit:
            raise LimitExceeded(
                setting, field, f"{what}: {total} in this request exceed {setting} ({limit})"
            )

    def at_most(self, setting: str, amount: int, field: str, what: str) -> None:
        """Refuse one item whose own size `amount` is over `setting` (not summed)."""
        limit = self.limits.get(setting)
        if limit is not None and amount > limit:
            raise LimitExceeded(setting, field, f"{what} is {amount}, over {setting} ({limit})")

    def distinct(self, setting: str, key: str, field: str, what: str) -> None:
        """Count `key` once under `setting`, however often the request names it."""
        seen = self._distinct.setdefault(setting, set())
        if key not in seen:
            seen.add(key)
            self.charge(setting, 1, field, what)

    @contextlib.contextmanager
    def per_plan(self, settings: Iterable[str]) -> Iterator[None]:
        """Count `settings` for one plan of several whose checks each read only their own
        cases (a checkllm test): within the block the plan is held to the limit alone,
        and the request's count is the most any one plan used, not their sum."""
        saved = {s: self.used.pop(s, 0) for s in settings}
        try:
            yield
        finally:
            for s, before in saved.items():
                self.used[s] = max(before, self.used.get(s, 0))

    def left(self, setting: str) -> int | None:
        """How much of `setting` the request may still use; None when it has no limit."""
        limit = self.limits.get(setting)
        return None if limit is None else max(0, limit - self.used.get(setting, 0))


_current: ContextVar[RequestMeter | None] = ContextVar("scorewire_request_meter", default=None)


def current_meter() -> RequestMeter | None:
    """The meter of the request being loaded in this context, if any."""
    return _current.get()


@contextlib.contextmanager
def metering(meter: RequestMeter | None) -> Iterator[RequestMeter | None]:
    """Make `meter` current for the block (None: meter nothing)."""
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)
