"""The Python client's Agreement and Calibrate calls against a real server.

This server has no judge configured, so a judge check scores JUDGE_ERROR on every output:
labelled outputs whose score errored are not pairs, and agreement on zero pairs is an
explicit FAILED_PRECONDITION, never a kappa. (Successful figures are pinned over gRPC by
tests/labels/test_agreement_rpc.py, with the stand-in judge.)
"""

from __future__ import annotations

import uuid

import grpc
import pytest
from scorewire.client import AsyncClient, Client, ScorewireError

JUDGE = {"name": "polite", "type": "judge", "params": {"rubric": "Is it polite?"}}


def _cases(sample: str) -> list[dict[str, object]]:
    return [{"sample": {"id": sample}, "output": {"text": "Hello there"}}]


def test_agreement_on_errored_scores_is_failed_precondition(scorewire_addr: str) -> None:
    sample = f"py-agree-{uuid.uuid4()}"
    with Client(scorewire_addr) as client:
        client.put_labels(
            [{"sample_id": sample, "output": "Hello there", "passed": True, "labeller": "ana"}]
        )
        with pytest.raises(ScorewireError) as info:
            client.agreement(_cases(sample), [JUDGE], resamples=10)
    assert info.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "1 labelled outputs scored an error" in info.value.message


def test_calibrate_rejects_a_bad_threshold_naming_it(scorewire_addr: str) -> None:
    with Client(scorewire_addr) as client, pytest.raises(ScorewireError) as info:
        client.calibrate(_cases("x"), [JUDGE], thresholds=[1.5])
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "thresholds[0]" in info.value.message


async def test_the_asyncio_client_asks_too(scorewire_addr: str) -> None:
    async with AsyncClient(scorewire_addr) as client:
        with pytest.raises(ScorewireError) as info:
            await client.agreement(
                _cases("y"), [{"type": "contains", "params": {"needles": ["H"]}}]
            )
    assert info.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "none of the checks is judge-backed" in info.value.message
