"""A call's deadline as its checks and handlers read it."""

from __future__ import annotations

import time

from scorewire.core.context import DEADLINE_SLACK_S, CheckContext


def test_an_answer_within_the_slack_of_the_deadline_is_late() -> None:
    # Score, RunSuite and checkllm runs all end DEADLINE_EXCEEDED by this one rule: an
    # answer with under DEADLINE_SLACK_S left reaches the caller after its deadline
    now = time.monotonic()
    assert not CheckContext().past_deadline()  # no deadline: never late
    assert not CheckContext(deadline=now + 60).past_deadline()
    assert CheckContext(deadline=now + DEADLINE_SLACK_S / 2).past_deadline()
    assert CheckContext(deadline=now - 1).past_deadline()
