"""The plan-source memo: a request repeating recent checks reuses their key and source."""

from __future__ import annotations

from scorewire.scoring.source import SOURCE_MEMO_MAX_BYTES, PlanSource, SourceMemo
from scorewire.scoring.source import plan_key as _plan_key
from scorewire.v1 import scoring_pb2 as pb


def parts(*checks: pb.CheckSpec, yaml: str = "", compact: tuple[str, ...] = ()) -> tuple:  # type: ignore[type-arg]
    serialized = tuple(c.SerializeToString(deterministic=True) for c in checks)
    return (yaml, "", serialized, compact, None, 64, "")


def contains(needle: str) -> pb.CheckSpec:
    spec = pb.CheckSpec(type="contains")
    spec.params["needles"] = [needle]
    return spec


def test_a_repeat_is_the_remembered_key_and_source() -> None:
    memo = SourceMemo()
    key, source = memo.get(*parts(contains("a")))
    again = memo.get(*parts(contains("a")))
    assert again[0] == key and again[1] is source
    # the key is the digest of the source, as when nothing is remembered
    assert key == _plan_key(source)
    assert len(memo) == 1


def test_different_checks_or_compact_lines_are_different_plans() -> None:
    memo = SourceMemo()
    keys = {
        memo.get(*parts(contains("a")))[0],
        memo.get(*parts(contains("b")))[0],
        memo.get(*parts(contains("a"), compact=("contains: a",)))[0],
        memo.get(*parts(contains("a"), yaml="checks: []"))[0],
    }
    assert len(keys) == 4


def test_a_big_source_is_built_every_time_and_not_kept() -> None:
    memo = SourceMemo()
    big = parts(contains("x" * (SOURCE_MEMO_MAX_BYTES + 1)))
    first, second = memo.get(*big), memo.get(*big)
    assert first[0] == second[0] and first[1] is not second[1]
    assert len(memo) == 0


def test_the_memo_forgets_the_least_recently_used_beyond_its_size() -> None:
    memo = SourceMemo(size=2)
    a = memo.get(*parts(contains("a")))[1]
    memo.get(*parts(contains("b")))
    assert memo.get(*parts(contains("a")))[1] is a  # a is now the most recent
    memo.get(*parts(contains("c")))  # b goes
    assert len(memo) == 2
    assert memo.get(*parts(contains("a")))[1] is a
    assert isinstance(memo.get(*parts(contains("b")))[1], PlanSource)
    assert len(memo) == 2


# ---- Score's memo key: the wire bytes of its plan fields --------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from scorewire.scoring.source import score_plan_wire  # noqa: E402

_text = st.text(alphabet="ab é東\n", max_size=300)
_specs = st.lists(
    st.builds(
        lambda t, n, needle: _spec(t, n, needle),
        st.sampled_from(["contains", "regex", "length"]),
        st.text(alphabet="xyz", max_size=3),
        _text,
    ),
    max_size=4,
)


def _spec(ctype: str, name: str, needle: str) -> pb.CheckSpec:
    spec = pb.CheckSpec(type=ctype, name=name)
    spec.params["needles"] = [needle]
    return spec


@settings(max_examples=300, deadline=None)
@given(
    _specs,
    st.lists(_text, max_size=3),
    _text,
    st.one_of(st.none(), st.floats(allow_nan=False)),
    st.booleans(),
)
def test_the_plan_bytes_are_the_checks_and_compact_lines_as_sent(
    checks: list[pb.CheckSpec], compact: list[str], text: str, budget: float | None, sample: bool
) -> None:
    # Whatever the case and budget around them, the key is exactly the serialization of
    # the plan fields alone: equal keys are equal plans.
    req = pb.ScoreRequest(checks=checks, compact=compact, output=pb.Output(text=text))
    if sample:
        req.sample.id = text[:5]
        req.sample.expected_json = '{"a": 1}'
    if budget is not None:
        req.budget_usd = budget
    got = score_plan_wire(req.SerializeToString())
    assert got == pb.ScoreRequest(checks=checks, compact=compact).SerializeToString()


def test_bytes_that_are_not_the_runtimes_score_request_have_no_plan_key() -> None:
    req = pb.ScoreRequest(checks=[_spec("contains", "", "a")], output=pb.Output(text="t"))
    raw = req.SerializeToString()
    assert score_plan_wire(raw) is not None
    assert score_plan_wire(raw + b"\x30\x01") is None  # an unknown field 6
    assert score_plan_wire(raw[:-1]) is None  # cut short
    assert (
        score_plan_wire(raw + pb.ScoreRequest(output=pb.Output(text="u")).SerializeToString())
        is None
    )


def test_a_scores_plan_bytes_share_the_memo_and_its_bound() -> None:
    memo = SourceMemo(size=2)
    built: list[bytes] = []

    def build(plan: bytes):  # type: ignore[no-untyped-def]
        def make():  # type: ignore[no-untyped-def]
            built.append(plan)
            return memo.get(*parts(contains(plan.decode())))

        return make

    first = memo.wired(b"a", build(b"a"))
    assert memo.wired(b"a", build(b"a")) is first and built == [b"a"]  # a hit builds nothing
    memo.wired(b"b", build(b"b"))  # with the entries its builds made, over the bound of 2
    assert len(memo) == 2
    big = b"x" * (SOURCE_MEMO_MAX_BYTES + 1)
    memo.wired(big, build(big))
    memo.wired(big, build(big))
    assert built.count(big) == 2  # too big to remember: built every time


# ---- score_plan_wire against the runtime, on requests drawn from the descriptor -------

from google.protobuf.message import DecodeError  # noqa: E402
from hypothesis import reject  # noqa: E402

from tests.support.wire_draw import message_bytes  # noqa: E402


def _canonical(m: pb.ScoreRequest) -> bytes:
    return m.SerializeToString(deterministic=True)


@settings(max_examples=300, deadline=None)
@given(message_bytes(pb.ScoreRequest.DESCRIPTOR, depth=3))
def test_the_plan_bytes_are_the_requests_plan_or_none(raw: bytes) -> None:
    # Every field of ScoreRequest (nested ones too), unknown fields of every wire type,
    # repeated and duplicated fields, in any order. On any bytes the runtime reads, the
    # plan bytes are None or hold exactly the request's checks and compact lines (and
    # nothing else): a memo hit is never another plan. On the runtime's own serialization
    # they are never None, and are its plan fields as written (a map's entries may be
    # written in any order, so two serializations of one plan can differ: the check is
    # that the bytes are a slice of the request's, and read back as its plan).
    try:
        request = pb.ScoreRequest.FromString(raw)
    except DecodeError:
        reject()
    plan = pb.ScoreRequest(checks=request.checks, compact=request.compact)
    got = score_plan_wire(raw)
    if got is not None:
        assert _canonical(pb.ScoreRequest.FromString(got)) == _canonical(plan)
    request.DiscardUnknownFields()
    plan.DiscardUnknownFields()
    own = request.SerializeToString()
    got = score_plan_wire(own)
    assert got is not None and got in own
    assert _canonical(pb.ScoreRequest.FromString(got)) == _canonical(plan)
