"""`labels_of_outputs`, the label stores' read of many outputs at once, against reading them
one by one with `list_labels` (what Agreement did before), on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest
from scorewire.labels.label_model import Label, LabelQuery, latest_per_labeller
from scorewire.labels.sqlite import OUTPUTS_PER_SELECT

from tests.labels.conftest import label
from tests.labels.test_agreement_rpc import store  # noqa: F401 - SQLite and PostgreSQL

SAMPLES = 3 * OUTPUTS_PER_SELECT // 2
"""More outputs than one SQLite SELECT reads: the store splits them."""


def _history(rng: random.Random) -> list[Label]:
    # two outputs per sample, two label checks, three labellers, two tenants, relabelled
    # over time (some at the same second: the one stored last counts)
    out = []
    for i in range(SAMPLES):
        for _ in range(rng.randrange(0, 4)):
            lb = label(
                f"s{i}",
                rng.choice(["Paris", "Lyon"]),
                rng.random() < 0.5,
                rng.choice(["ana", "bo", "cy"]),
                check=rng.choice(["default", "tone"]),
                at=rng.randrange(0, 5),
                note=rng.choice(["", "hm"]),
            )
            out.append(replace(lb, tenant=rng.choice(["", "acme"])))
    return out


async def _one_by_one(
    labels: Any, query: LabelQuery, keys: list[tuple[str, str]]
) -> dict[tuple[str, str], list[Label]]:
    found = {}
    for sample_id, digest in keys:
        q = replace(query, sample_id=sample_id, output_hash=digest)
        listed = await labels.list_labels(q, after_id=0, limit=10_000)
        if listed:
            found[(sample_id, digest)] = latest_per_labeller([lb for _, lb in listed])
    return found


def _grouped(labels: list[Label]) -> dict[tuple[str, str], list[Label]]:
    groups: dict[tuple[str, str], list[Label]] = {}
    for lb in labels:
        groups.setdefault((lb.sample_id, lb.output_hash), []).append(lb)
    return {key: latest_per_labeller(group) for key, group in groups.items()}


@pytest.mark.parametrize(
    "query",
    [
        LabelQuery(check="default"),
        LabelQuery(check="tone", labeller="bo"),
        LabelQuery(check="default", tenant="acme"),
    ],
    ids=["check", "labeller", "tenant"],
)
async def test_many_outputs_at_once_read_as_one_by_one(store: Any, query: LabelQuery) -> None:  # noqa: F811
    rng = random.Random(11)
    history = _history(rng)
    for start in range(0, len(history), 200):
        await store.put(history[start : start + 200])
    # every labelled output, outputs nobody labelled, and repeats
    keys = sorted({(lb.sample_id, lb.output_hash) for lb in history})
    keys += [(f"s{i}", label(text="Nice").output_hash) for i in range(5)] + keys[:7]
    rng.shuffle(keys)
    want = await _one_by_one(store, query, list(dict.fromkeys(keys)))
    assert want  # the query matches something
    got = await store.labels_of_outputs(query, keys)
    assert _grouped(got) == want
    assert await store.labels_of_outputs(query, []) == []


async def test_a_sample_id_postgresql_cannot_hold_matches_nothing(store: Any) -> None:  # noqa: F811
    await store.put([label("s1")])
    got = await store.labels_of_outputs(
        LabelQuery(check="default"), [("s\x001", label().output_hash), ("s1", label().output_hash)]
    )
    assert [lb.sample_id for lb in got] == ["s1"]
