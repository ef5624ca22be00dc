"""What `scorewire run`'s options change about a loaded suite: `--filter`, `--repeat`,
`--max-concurrency` and `--no-cache`."""

from __future__ import annotations

import dataclasses

from scorewire.cli.common import UsageError
from scorewire.cli.loading import RunSpec
from scorewire.core.model import Sample
from scorewire.generation.generator import GenerationJob


def _wanted(text: str) -> tuple[set[int], str]:
    """Indices (`2`, `0,3`, `1-4`) or, when the text is not one, a substring."""
    indices: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        low, dash, high = part.partition("-")
        if part.isdigit():
            indices.add(int(part))
        elif dash and low.strip().isdigit() and high.strip().isdigit():
            indices.update(range(int(low), int(high) + 1))
        else:
            return set(), text.strip().lower()
    return indices, ""


def filter_spec(spec: RunSpec, text: str) -> None:
    """Keep the tests (checkllm) or cases (evalstone) that `text` names: an index, a list or
    range of indices, or a substring of the test's description (the case's id)."""
    indices, needle = _wanted(text)
    if spec.format == "checkllm":
        kept = [
            g
            for g in spec.groups
            if (int(g.name.removeprefix("t")) in indices)
            or (needle and needle in g.description.lower())
        ]
    else:
        kept = []
        for g in spec.groups:
            jobs = [
                j
                for n, j in enumerate(g.jobs)
                if n in indices or (needle and needle in j.sample.id.lower())
            ]
            if jobs:
                kept.append(dataclasses.replace(g, jobs=jobs))
    if not kept:
        what = "test" if spec.format == "checkllm" else "case"
        raise UsageError(f"--filter {text!r} matches no {what} of {spec.path}")
    spec.groups = kept


def repeat_spec(spec: RunSpec, times: int) -> None:
    """Run every case `times` times; copies get ids ending `#2`, `#3`, ... and new indices."""
    spec.repeat = times
    if times == 1:
        return
    index = 0
    groups = []
    for g in spec.groups:
        jobs: list[GenerationJob] = []
        for job in g.jobs:
            for r in range(times):
                s = job.sample
                sample = (
                    s
                    if r == 0
                    else Sample(f"{s.id}#{r + 1}", s.input, s.expected, {**s.metadata, "repeat": r})
                )
                jobs.append(dataclasses.replace(job, sample=sample, index=index))
                index += 1
        groups.append(dataclasses.replace(g, jobs=jobs))
    spec.groups = groups


def apply_options(
    spec: RunSpec,
    *,
    filter_text: str | None,
    repeat: int,
    max_concurrency: int | None,
    no_cache: bool,
    fresh_judges: bool = False,
) -> list[str]:
    """Change `spec` as the options ask; the notes to print with the summary."""
    notes: list[str] = []
    if filter_text:
        filter_spec(spec, filter_text)
    if repeat < 1:
        raise UsageError("--repeat must be at least 1")
    repeat_spec(spec, repeat)
    if max_concurrency is not None:
        if max_concurrency < 1:
            raise UsageError("--max-concurrency must be at least 1")
        spec.concurrency = max_concurrency
    if fresh_judges:
        spec.fresh_judges = True
    if no_cache or repeat > 1:
        # A cached answer would make every repeat a copy of the first.
        spec.cache = False
        spec.fresh = True
        notes.append(
            "caches off: every provider and judge call was made"
            + (" (--repeat turns them off)" if repeat > 1 and not no_cache else "")
        )
    elif spec.fresh_judges:
        notes.append(
            "judges asked again: no verdict cached before the run was read; the new ones are cached"
        )
    return notes
