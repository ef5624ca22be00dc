"""The kernel's check of a RunSuite case (`plain_case_ok`) passes only cases the server's
own check passes, and passes the cases clients usually send.

The server checks every case of a batch the workers score before it answers anything
(it parses, its output is within the limits, its JSON text is JSON). The kernel vouches
for cases of strings and JSON text without parsing them in Python
(`server.suite_runs.RequestChecks.bytes_checker`); any case it does not vouch for goes
through the Python check. A case it passed that Python refuses would be scored where it
must be refused, so every drawn message (`tests.support.wire_draw`: every field, unknown
fields, duplicates, any order) and every plain case built from drawn strings and JSON
texts is held to that.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scorewire.engine import native
from scorewire.scoring.compiler import compile_plan
from scorewire.scoring.limits import short_output
from scorewire.scoring.plan_source import PlanSource
from scorewire.server.status import RequestRejected
from scorewire.server.suite_runs import RequestChecks
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb

from tests.support.components import require_component
from tests.support.wire_draw import _json_texts, message_bytes

if not native.available():
    require_component(
        "the native kernel", "not built here (make install builds service/native with cargo)"
    )

SETTINGS = Settings(max_output_bytes=2_000)
INFO = compile_plan(PlanSource(compact=("contains: Paris",)), SETTINGS).info
SHORT = short_output(SETTINGS, INFO.whole_text_caps)
PYTHON_CHECK = RequestChecks(SETTINGS).case_checker(INFO)
KERNEL_CHECK = native.plain_case_ok()
assert KERNEL_CHECK is not None


def python_passes(raw: bytes) -> bool:
    try:
        PYTHON_CHECK(raw, 0)
    except RequestRejected:
        return False
    return True


def vouched_only_if_python_passes(raw: bytes, check: Callable[[bytes, int], bool]) -> bool:
    vouched = check(raw, SHORT)
    assert not vouched or python_passes(raw), raw
    return vouched


@settings(max_examples=300, deadline=None)
@given(message_bytes(pb.Case.DESCRIPTOR, depth=4))
def test_a_drawn_case_is_passed_only_if_python_passes_it(raw: bytes) -> None:
    assert KERNEL_CHECK is not None
    vouched_only_if_python_passes(raw, KERNEL_CHECK)


@settings(max_examples=300, deadline=None)
@given(
    st.text(max_size=20),
    st.one_of(st.just(""), _json_texts()),
    st.one_of(st.just(""), _json_texts()),
    st.one_of(st.just(""), _json_texts()),
    st.text(max_size=3_000),
    st.sampled_from(["", "0", "t1"]),
)
def test_a_plain_case_is_passed_only_if_python_passes_it(
    sample_id: str, inp: str, exp: str, val: str, text: str, test: str
) -> None:
    # Strings and JSON text only: what the kernel judges itself (it declines JSON whose
    # value its parser does not hold as Python's does: integers past 64 bits, floats
    # past their range, lone surrogates, repeated keys; and texts past the short limit).
    case = pb.Case(
        sample=pb.Sample(id=sample_id, input_json=inp, expected_json=exp),
        output=pb.Output(text=text, value_json=val),
        test=test,
    )
    assert KERNEL_CHECK is not None
    vouched_only_if_python_passes(case.SerializeToString(), KERNEL_CHECK)


@pytest.mark.parametrize(
    ("case", "vouched"),
    [
        (
            pb.Case(
                sample=pb.Sample(id="s0", input_json='{"q": 1}', expected_json="[1, 2]"),
                output=pb.Output(text="Paris"),
            ),
            True,
        ),
        (
            pb.Case(
                sample=pb.Sample(
                    id="s1",
                    input_json='{"question": "q1", "n": [1.5, -2, null]}',
                    expected_json='{"answer": "a", "must_include": ["x"]}',
                ),
                output=pb.Output(text="Paris " * 40, value_json='{"ok": true}'),
                test="3",
            ),
            True,
        ),
        (pb.Case(sample=pb.Sample(input_json="{not json"), output=pb.Output(text="x")), False),
        (pb.Case(sample=pb.Sample(input_json="NaN"), output=pb.Output(text="x")), False),
        (pb.Case(output=pb.Output(text="x", value_json="[" * 200 + "]" * 200)), False),
        (pb.Case(output=pb.Output(text="x" * (SHORT + 1))), False),
        (pb.Case(sample=pb.Sample(metadata={"k": "v"}), output=pb.Output(text="x")), False),
    ],
    ids=["plain", "a client's usual case", "not JSON", "NaN", "deep", "long text", "metadata"],
)
def test_what_the_kernel_leaves_to_python(case: pb.Case, vouched: bool) -> None:
    assert KERNEL_CHECK is not None
    assert KERNEL_CHECK(case.SerializeToString(), SHORT) is vouched
