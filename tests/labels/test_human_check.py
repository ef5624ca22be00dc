"""The `human` check: labels from a JSONL file, from the service's store, and their failures."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import replace

import pytest
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample, Score
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.labels.jsonl import FILE_CACHE, label_line
from scorewire.labels.label_model import Label, LabelsUnavailable, output_hash

from tests.labels.conftest import label
from tests.support.checks import load_errors


@pytest.fixture(autouse=True)
def _fresh_file_cache():
    FILE_CACHE.clear()
    yield
    FILE_CACHE.clear()


def write_labels(path, labels: Sequence[Label], extra_lines: Sequence[str] = ()) -> str:
    with open(path, "w", encoding="utf-8") as f:
        for lb in labels:
            f.write(label_line(lb))
        for line in extra_lines:
            f.write(line + "\n")
    return str(path)


def append_line(path: str, line: str) -> None:
    with open(path, "a", encoding="utf-8") as f:
        f.write(line)


async def score(params, sample_id="s1", text="Paris", ctx=None, value=None) -> Score:
    cc = compile_check(CheckSpec(type="human", params=params), "checks[0]")
    sample = Sample(id=sample_id)
    return await run_check(cc, sample, Output(text=text, value=value), ctx or CheckContext())


class FakeStore:
    """A label store in memory that can be switched off."""

    def __init__(self, labels: Sequence[Label] = (), down: bool = False) -> None:
        self.labels = list(labels)
        self.down = down
        self.lookups: list[tuple[str, str, str]] = []

    async def lookup(
        self, sample_id: str, digest: str, check: str, *, tenant: str = ""
    ) -> list[Label]:
        self.lookups.append((sample_id, digest, check))
        if self.down:
            raise LabelsUnavailable("connection refused")
        from scorewire.labels.label_model import latest_per_labeller

        return latest_per_labeller(
            [
                lb
                for lb in self.labels
                if (lb.sample_id, lb.output_hash, lb.check) == (sample_id, digest, check)
                and tenant in ("", lb.tenant)
            ]
        )


# (labels in file order, sample id, output text, check param, passed, value, reason part)
FILE_CASES = [
    # a label for this sample and this exact output that passed: pass
    ([label()], "s1", "Paris", None, True, 1.0, "labelled pass by ana"),
    # a label that failed: fail, with the labeller's note in the reason
    ([label(passed=False, note="too terse")], "s1", "Paris", None, False, 0.0, "too terse"),
    # no label at all for the sample: a fail (not an error) saying so
    ([label(sample_id="other")], "s1", "Paris", None, False, 0.0, "no label for this output"),
    # a label of a different output of the same sample does not count
    ([label(text="Paris.")], "s1", "Paris", None, False, 0.0, "no label for this output"),
    # the hash covers the exact text: trailing whitespace is a different output
    ([label(text="Paris")], "s1", "Paris\n", None, False, 0.0, "no label for this output"),
    # the latest label of a labeller counts (fail at 0 s, pass at 5 s)
    (
        [label(passed=False, at=0), label(passed=True, at=5)],
        "s1", "Paris", None, True, 1.0, "pass",
    ),
    # ... by its time, not by its line: an older label written later does not win
    (
        [label(passed=True, at=5), label(passed=False, at=0)],
        "s1", "Paris", None, True, 1.0, "pass",
    ),
    # same time: the later line wins
    (
        [label(passed=True, at=5), label(passed=False, at=5)],
        "s1", "Paris", None, False, 0.0, "labelled fail by ana",
    ),
    # two labellers who disagree: a fail, value the fraction that passed
    (
        [label(labeller="ana"), label(labeller="bo", passed=False)],
        "s1", "Paris", None, False, 0.5, "1 of 2 labellers (bo)",
    ),
    # two labellers who agree: a pass naming both
    (
        [label(labeller="ana"), label(labeller="bo")],
        "s1", "Paris", None, True, 1.0, "ana, bo",
    ),
    # a label for another label check does not count for the default one
    ([label(check="tone")], "s1", "Paris", None, False, 0.0, "no label for this output"),
    # `check:` selects the label check
    (
        [label(check="tone", passed=False), label(check="facts")],
        "s1", "Paris", "facts", True, 1.0, "pass",
    ),
    # a sample without an id can match no label: a plain fail
    ([label(sample_id="s1")], "", "Paris", None, False, 0.0, "no label for this output"),
]  # fmt: skip


@pytest.mark.parametrize(
    ("labels", "sample_id", "text", "check", "passed", "value", "reason"), FILE_CASES
)
async def test_human_reads_a_jsonl_file(
    tmp_path, labels, sample_id, text, check, passed, value, reason
) -> None:
    path = write_labels(tmp_path / "labels.jsonl", labels)
    params = {"labels": path} | ({"check": check} if check else {})
    got = await score(params, sample_id=sample_id, text=text)
    assert got.error is None
    assert (got.passed, got.value) == (passed, value)
    assert reason in got.reason


async def test_structured_output_is_bound_by_its_compact_json(tmp_path) -> None:
    # An output with no text is identified by its value as compact sorted JSON.
    value = {"b": 1, "a": "é"}
    lb = label(text=json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")))
    path = write_labels(tmp_path / "l.jsonl", [lb])
    got = await score({"labels": path}, text="", value=value)
    assert got.passed


# (file content or None for missing, error message part)
BROKEN_FILES = [
    # no file: an error score, never a pass
    (None, "cannot read labels file"),
    # a line that is not JSON: the whole file is unusable, named by line
    ([label_line(label()).strip(), "{not json"], "line 2"),
    # a label without output_hash
    (['{"sample_id": "s1", "passed": true}'], "'output_hash'"),
    # passed must be a boolean, not a string
    ([json.dumps({"sample_id": "s1", "output_hash": output_hash("x"), "passed": "yes"})], "true"),
    # a bad time
    (
        [
            json.dumps(
                {"sample_id": "s1", "output_hash": output_hash("x"), "passed": True, "time": "x"}
            )
        ],
        "ISO-8601",
    ),
]


@pytest.mark.parametrize(("lines", "message"), BROKEN_FILES)
async def test_unreadable_labels_file_is_an_error_score(tmp_path, lines, message) -> None:
    path = tmp_path / "labels.jsonl"
    if lines is not None:
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    got = await score({"labels": str(path)})
    assert got.error is not None and got.error.code == "LABELS_UNAVAILABLE"
    assert not got.passed and message in got.error.message


async def test_blank_lines_and_missing_optional_keys_are_fine(tmp_path) -> None:
    # labeller, note, time and check are optional in a hand-written file.
    path = tmp_path / "labels.jsonl"
    path.write_text(
        "\n" + json.dumps({"sample_id": "s1", "output_hash": output_hash("Paris"), "passed": True})
    )
    got = await score({"labels": str(path)})
    assert got.passed


async def test_relative_path_is_resolved_against_the_suite_directory(tmp_path) -> None:
    # ctx.extras["suite_dir"] is where a relative labels: path is looked for.
    write_labels(tmp_path / "mine.jsonl", [label()])
    got = await score({"labels": "mine.jsonl"}, ctx=CheckContext(extras={"suite_dir": tmp_path}))
    assert got.passed


async def test_file_is_reread_when_it_changes(tmp_path) -> None:
    # The cache is keyed by mtime/size/inode: a label appended later is seen.
    path = write_labels(tmp_path / "labels.jsonl", [label(passed=False)])
    first = await score({"labels": path})
    assert first.error is None and not first.passed
    append_line(path, label_line(label(passed=True, at=30)))
    stat = os.stat(path)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    assert (await score({"labels": path})).passed


async def test_file_is_read_once_while_unchanged(tmp_path, monkeypatch) -> None:
    # Per sample only a stat happens; the file is parsed once.
    path = write_labels(tmp_path / "labels.jsonl", [label()])
    import scorewire.labels.jsonl as jsonl

    reads = []
    real = jsonl.read_labels
    monkeypatch.setattr(jsonl, "read_labels", lambda p: reads.append(p) or real(p))
    for _ in range(5):
        assert (await score({"labels": path})).passed
    assert reads == [path]


# ---- labels: center and the default source ---------------------------------------------------


async def test_center_reads_the_services_store() -> None:
    # The lookup is by sample id, the output's hash and the label check.
    store = FakeStore([label(check="tone")])
    got = await score({"labels": "center", "check": "tone"}, ctx=CheckContext(labels=store))
    assert got.passed
    assert store.lookups == [("s1", output_hash("Paris"), "tone")]


async def test_center_without_a_store_is_an_error_score() -> None:
    # An in-process run has no store: labels: center cannot be answered.
    got = await score({"labels": "center"})
    assert got.error is not None and got.error.code == "LABELS_UNAVAILABLE"


async def test_store_that_does_not_answer_is_an_error_score_never_a_pass() -> None:
    # A store hiccup counts toward max_error_rate.
    got = await score({"labels": "center"}, ctx=CheckContext(labels=FakeStore([label()], True)))
    assert got.error is not None and got.error.code == "LABELS_UNAVAILABLE"
    assert not got.passed and got.value == 0.0


async def test_store_without_a_label_is_a_plain_fail() -> None:
    got = await score({"labels": "center"}, ctx=CheckContext(labels=FakeStore()))
    assert got.error is None and not got.passed and got.reason == "no label for this output"


async def test_default_source_is_the_store_when_the_run_has_one(tmp_path) -> None:
    # Server-backed: the store wins over a labels.jsonl next to the suite.
    write_labels(tmp_path / "labels.jsonl", [label(passed=False)])
    ctx = CheckContext(labels=FakeStore([label()]), extras={"suite_dir": str(tmp_path)})
    assert (await score({}, ctx=ctx)).passed


async def test_default_source_in_process_is_labels_jsonl_next_to_the_suite(tmp_path) -> None:
    write_labels(tmp_path / "labels.jsonl", [label()])
    assert (await score({}, ctx=CheckContext(extras={"suite_dir": str(tmp_path)}))).passed


async def test_default_source_with_neither_store_nor_suite_is_an_error() -> None:
    got = await score({})
    assert got.error is not None and got.error.code == "LABELS_UNAVAILABLE"


# ---- parameters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "field"),
    [
        # an empty check name
        ({"check": ""}, "checks[0].params.check"),
        # an unknown parameter
        ({"labeler": "x"}, "checks[0].params.labeler"),
        # a blank path
        ({"labels": "  "}, "checks[0].params.labels"),
    ],
)
def test_bad_params_are_load_errors(params, field) -> None:
    assert list(load_errors("human", params)) == [field]


def test_examples_are_not_a_self_test() -> None:
    # A human check cannot score an example offline; examples are not run at load.
    from scorewire.engine.spec import Example

    spec = CheckSpec(type="human", examples=[Example("x", "positive")])
    compile_check(spec, "checks[0]")


class TenantContext(CheckContext):
    """A context naming the caller's tenant, as the service builds it with auth on."""

    __slots__ = ("tenant",)

    def __init__(self, tenant: str | None, **kw) -> None:
        super().__init__(**kw)
        self.tenant = tenant


async def test_a_run_with_a_tenant_reads_only_that_tenants_labels(sqlite_store) -> None:
    # Finding 4: labels of one tenant must not decide another tenant's human check.
    await sqlite_store.put(
        [
            replace(label(passed=True), tenant="checkout"),
            replace(label(passed=False, labeller="bo"), tenant="search"),
        ]
    )
    for tenant, passed, reason in [
        ("checkout", True, "labelled pass by ana"),
        ("search", False, "labelled fail by bo"),
        ("other", False, "no label for this output"),
        # No tenant (auth off, in-process): every tenant's labels count.
        (None, False, "labelled fail by 1 of 2 labellers"),
    ]:
        got = await score({"labels": "center"}, ctx=TenantContext(tenant, labels=sqlite_store))
        assert (got.passed, got.reason.startswith(reason)) == (passed, True), (tenant, got)
