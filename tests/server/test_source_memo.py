"""The plan-source memo: a request repeating recent checks reuses their key and source."""

from __future__ import annotations

from scorewire.scoring.plan_source import SOURCE_MEMO_MAX_BYTES, PlanSource, SourceMemo
from scorewire.scoring.plan_source import plan_key as _plan_key
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
