"""`Screen`: strings over their bound are refused from a request's bytes, nothing else."""

from __future__ import annotations

import grpc
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.scoring.screening import MIN_BYTES, Bound, Screen
from scorewire.server.status import RequestRejected, resource_exhausted
from scorewire.v1 import scoring_pb2 as pb

MOST = 4096
PAD = "p" * MIN_BYTES  # an output that makes any request big enough to be screened


def screen(message: type) -> Screen:
    refuse = lambda field, n: resource_exhausted(field, f"{n} bytes")  # noqa: E731
    return Screen(message.DESCRIPTOR, {"compact": Bound(MOST, refuse)})


def refused_at(got: RequestRejected | None) -> str | None:
    if got is None:
        return None
    assert got.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    return got.violations[0].field


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(0, 2 * MOST), max_size=6), st.integers(0, 3))
def test_the_first_line_over_the_bound_is_named(sizes: list[int], checks: int) -> None:
    # Lines among structured checks and a big output, each measured from the bytes.
    request = pb.ScoreRequest(output=pb.Output(text=PAD), compact=["x" * n for n in sizes])
    for _ in range(checks):
        request.checks.add(type="contains").params.update({"needles": ["x" * MOST * 2]})
    over = [i for i, n in enumerate(sizes) if n > MOST]
    expected = f"compact[{over[0]}]" if over else None
    assert refused_at(screen(pb.ScoreRequest)(request.SerializeToString())) == expected


def test_lines_are_found_inside_the_stream_configs() -> None:
    line = "x" * (MOST + 1)
    config = pb.RunSuiteStreamConfig(request=pb.RunSuiteRequest(compact=["ok", line]))
    data = pb.RunSuiteStreamRequest(config=config).SerializeToString()
    padded = pb.RunSuiteStreamRequest(config=config)
    padded.config.request.cases.add().output.text = PAD
    found = screen(pb.RunSuiteStreamRequest)(padded.SerializeToString())
    assert refused_at(found) == "config.request.compact[1]"
    assert screen(pb.RunSuiteStreamRequest)(data) is None  # small: left to the handler


def test_a_type_without_bounded_fields_has_no_screen() -> None:
    assert not screen(pb.ListChecksRequest)
    assert screen(pb.ScoreStreamRequest)


@settings(max_examples=300, deadline=None)
@given(st.binary(min_size=1, max_size=64))
def test_bytes_that_are_no_message_are_left_to_the_parser(unit: bytes) -> None:
    # Never an exception: what the screen cannot read, the parser reports.
    data = unit * (MIN_BYTES // len(unit) + 1)
    got = screen(pb.ScoreRequest)(data)
    assert got is None or isinstance(got, RequestRejected)
