"""`human`: the output passes when people labelled this exact output of this sample a pass.

A label is bound to an output by `output_hash` (SHA-256 of the output's UTF-8 text; of
its compact JSON value when the text is empty, see `scorewire.labels.labelled_text`),
so a changed output needs a new label. Where labels come from:

- `labels: <path>`: a JSONL file written by `scorewire label`. A relative path is
  resolved against the suite's directory when the engine passes it
  (`ctx.extras["suite_dir"]`), else against the current directory. The file is read
  once and re-read only when it changes.
- `labels: center`: the service's label store (`ctx.labels`); a run without one
  (in-process) gets an error score for every sample.
- no `labels:`: the service's store when the run has one (server-backed); otherwise
  `labels.jsonl` in the suite's directory; with neither, an error score.

`check` names the label check to read (default `default`, which is also what
`scorewire label` writes without `--check`), so one suite can hold several human checks.

Several labellers: the latest label of each counts, and the check passes only when every
one of them passed the output (value = the fraction that did). No label for this output
is a plain fail ("no label for this output"). A store or file that cannot answer is an
error score (LABELS_UNAVAILABLE), never a pass, so it counts toward max_error_rate.
A sample without an id can match no label, so it fails like an unlabelled one.

Tenants: the service's store holds labels of many tenants (bearer token names). A run
whose context names a tenant (`ctx.tenant`, the caller's token name when auth is on)
reads only that tenant's labels; a run without one (auth off, in-process) reads all.
"""

from __future__ import annotations

import os

from pydantic import Field
from scorewire.core.context import CheckContext
from scorewire.core.model import ErrorCode, Output, Sample, Score
from scorewire.core.registry import CheckFn, ParamError, Params, Uncosted, check_type
from scorewire.labels.jsonl import FILE_CACHE, LabelFileError
from scorewire.labels.label_model import (
    DEFAULT_CHECK,
    MAX_NAME_CHARS,
    Label,
    LabelStore,
    LabelsUnavailable,
    labelled_text,
    output_hash,
    verdict,
)

CENTER = "center"
"""The `labels:` value that names the service's label store."""
DEFAULT_FILE = "labels.jsonl"
"""The labels file read next to the suite when `labels:` is not set and there is no store."""

_NO_STORE = (
    "labels: center needs the service's label store, and this run has none "
    "(run the suite through a scorewire server, or set labels: to a JSONL file)"
)
_NO_SOURCE = (
    "no label store and no suite directory to find labels.jsonl in: "
    "set labels: to a JSONL file, or run through a scorewire server"
)


class HumanParams(Params):
    """Parameters of `human`."""

    labels: str | None = Field(
        None,
        description="A JSONL labels file, or `center` for the service's label store; "
        "default: the service's store when there is one, else labels.jsonl next to the suite.",
    )
    check: str = Field(
        DEFAULT_CHECK,
        min_length=1,
        max_length=MAX_NAME_CHARS,
        description="Which label check to read (labels carry the check they are for).",
    )


def _score(labels: list[Label]) -> Score:
    v = verdict(labels)
    return Score(v.value, v.passed, v.reason)


def _unavailable(message: str) -> Score:
    return Score.fail_with_error(ErrorCode.LABELS_UNAVAILABLE, message)


def _resolve(path: str, ctx: CheckContext) -> str:
    if os.path.isabs(path):
        return path
    base = ctx.extras.get("suite_dir")
    return os.path.join(str(base), path) if base else os.path.abspath(path)


def _from_file(path: str, sample: Sample, output: Output, check: str) -> Score:
    if not sample.id:
        return _score([])
    try:
        index = FILE_CACHE.get(path)
    except LabelFileError as err:
        return _unavailable(str(err))
    digest = output_hash(labelled_text(output.text, output.value))
    return _score(index.lookup(sample.id, digest, check))


def _tenant(ctx: CheckContext) -> str:
    """The tenant whose labels this run reads; empty (every tenant) when it names none."""
    return getattr(ctx, "tenant", None) or ""


async def _from_store(
    store: LabelStore, sample: Sample, output: Output, check: str, tenant: str
) -> Score:
    if not sample.id:
        return _score([])
    digest = output_hash(labelled_text(output.text, output.value))
    try:
        labels = await store.lookup(sample.id, digest, check, tenant=tenant)
    except LabelsUnavailable as err:
        return _unavailable(f"the label store did not answer: {err}")
    return _score(list(labels))


@check_type(
    "human",
    description="Passes when people labelled this exact output of this sample a pass.",
    family="human",
    params=HumanParams,
    self_testable=False,
    costs={
        "labels": Uncosted(
            "a labels file's path (or `center`), joined to the suite's directory per case; "
            "a request's label files are not read"
        )
    },
)
def build_human(params: HumanParams) -> CheckFn:
    """Bind the label source once; the returned function looks one output up."""
    check = params.check
    if params.labels is None:
        return _default_source(check)
    if params.labels == CENTER:

        async def from_center(sample: Sample, output: Output, ctx: CheckContext) -> Score:
            if ctx.labels is None:
                return _unavailable(_NO_STORE)
            return await _from_store(ctx.labels, sample, output, check, _tenant(ctx))

        return from_center
    if not params.labels.strip():
        raise ParamError("labels", "must be a JSONL file path or `center`")
    path = params.labels

    def from_file(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if ctx.extras.get("no_local_files"):
            # A request must not make the server read files of the caller's choosing.
            return _unavailable(
                "the server does not read label files named in a request; use labels: center"
            )
        return _from_file(_resolve(path, ctx), sample, output, check)

    return from_file


def _default_source(check: str) -> CheckFn:
    async def from_default(sample: Sample, output: Output, ctx: CheckContext) -> Score:
        if ctx.labels is not None:
            return await _from_store(ctx.labels, sample, output, check, _tenant(ctx))
        suite_dir = ctx.extras.get("suite_dir")
        if not suite_dir:
            return _unavailable(_NO_SOURCE)
        return _from_file(os.path.join(str(suite_dir), DEFAULT_FILE), sample, output, check)

    return from_default
