"""LabelService requests from plain Python values, shared by the sync and asyncio clients."""

from __future__ import annotations

import datetime as dt
import hashlib
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, TypeAlias

from scorewire.client._convert import CaseLike, CheckLike, _check_type, _keys, to_case, to_checks
from scorewire.v1 import labels_pb2 as lpb

LabelLike: TypeAlias = "lpb.Label | Mapping[str, Any]"

_LABEL_KEYS = (
    "sample_id",
    "output_hash",
    "output",
    "passed",
    "note",
    "labeller",
    "created_at",
    "check",
    "tenant",
)


def output_hash(text: str) -> str:
    """The `output_hash` of an output: SHA-256 of its exact UTF-8 bytes, lowercase hex."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def new_request_id() -> str:
    """A fresh PutLabels request id (a UUID), so that a retry of the call is safe."""
    return str(uuid.uuid4())


def to_label(obj: LabelLike) -> lpb.Label:
    """A Label from a mapping with the Label's field names; `output` (the output's text)
    may stand in for `output_hash`, and `created_at` may be a timezone-aware datetime."""
    if isinstance(obj, lpb.Label):
        return obj
    _check_type(obj, lpb.Label, "label")
    _keys("label", obj, _LABEL_KEYS)
    if "output" in obj and "output_hash" in obj:
        raise TypeError("label: give `output` or `output_hash`, not both")
    label = lpb.Label(
        sample_id=str(obj.get("sample_id") or ""),
        output_hash=obj.get("output_hash") or "",
        passed=bool(obj.get("passed", False)),
        note=obj.get("note") or "",
        labeller=obj.get("labeller") or "",
        check=obj.get("check") or "",
        tenant=obj.get("tenant") or "",
    )
    if "output" in obj:
        label.output_hash = output_hash(obj["output"])
    created = obj.get("created_at")
    if isinstance(created, dt.datetime):
        if created.tzinfo is None:
            raise TypeError("label.created_at: give a timezone-aware datetime")
        label.created_at.FromDatetime(created.astimezone(dt.timezone.utc))  # noqa: UP017 (3.10)
    elif created is not None:
        label.created_at.CopyFrom(created)
    return label


def put_request(labels: Iterable[LabelLike], request_id: str | None) -> lpb.PutLabelsRequest:
    """A PutLabelsRequest; `request_id` None means a fresh one for this call."""
    return lpb.PutLabelsRequest(
        labels=[to_label(label) for label in labels],
        request_id=new_request_id() if request_id is None else request_id,
    )


def list_request(
    *,
    sample_id: str,
    output_hash: str,
    check: str,
    labeller: str,
    tenant: str,
    include_history: bool,
    page_size: int,
    page_token: str,
) -> lpb.ListLabelsRequest:
    """A ListLabelsRequest; empty filters match everything."""
    return lpb.ListLabelsRequest(
        sample_id=sample_id,
        output_hash=output_hash,
        check=check,
        labeller=labeller,
        tenant=tenant,
        include_history=include_history,
        page_size=page_size,
        page_token=page_token,
    )


def agreement_request(
    cases: Iterable[CaseLike],
    checks: Iterable[CheckLike],
    *,
    check: str,
    label_check: str,
    labeller: str,
    tenant: str,
    resamples: int,
    seed: int,
    confidence: float,
    max_disagreements: int,
    budget_usd: float | None,
) -> lpb.AgreementRequest:
    """An AgreementRequest: cases and checks to score now, a label filter, the options."""
    req = lpb.AgreementRequest(
        cases=[to_case(c) for c in cases],
        checks=to_checks(checks),
        check=check,
        labels=lpb.LabelFilter(check=label_check, labeller=labeller, tenant=tenant),
        options=lpb.AgreementOptions(
            resamples=resamples,
            seed=seed,
            confidence=confidence,
            max_disagreements=max_disagreements,
        ),
    )
    if budget_usd is not None:
        req.budget_usd = budget_usd
    return req
