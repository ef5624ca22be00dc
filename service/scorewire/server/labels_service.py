"""The LabelService handlers: validate, authorize, call the label store, convert back.

Bad labels are INVALID_ARGUMENT with a google.rpc.BadRequest naming every offending
field (`labels[2].output_hash`). A store that does not answer is UNAVAILABLE with a
generic message (the detail goes to the log) that tells the truth about the write:
"nothing was stored" only when the store rolled it back, otherwise that the outcome is
unknown and a retry with the same `request_id` is safe.

Tenants (bearer tokens on): a label belongs to a tenant, a token name, and records the
writing token's name as labeller. A `caller` reads and writes its own tenant only; a
`labeller` also writes into any tenant (as itself) and lists what it wrote there; an
`admin` reads every tenant and writes into any under any labeller name (imports).
Anything else is PERMISSION_DENIED naming the field. With auth off nothing changes:
labeller is a required free field and every label is visible.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import grpc
from google.protobuf import timestamp_pb2
from scorewire.core.errors import FieldViolation, join_path
from scorewire.labels.label_model import (
    DEFAULT_CHECK,
    MAX_NAME_CHARS,
    MAX_NOTE_CHARS,
    MAX_SAMPLE_ID_BYTES,
    Label,
    LabelQuery,
    LabelsOutcomeUnknown,
    LabelStore,
    LabelsUnavailable,
    PutKey,
    RequestIdReused,
    is_output_hash,
    utc_now,
)
from scorewire.runs import RunRecorder
from scorewire.server import agreement_rpcs as trust
from scorewire.server import convert
from scorewire.server.registration import add_service
from scorewire.server.security import Principal, Role, principal
from scorewire.server.status import (
    RequestRejected,
    guarded_unary,
    invalid_argument,
    permission_denied,
    resource_exhausted,
    unavailable,
)
from scorewire.v1 import labels_pb2 as pb
from scorewire.v1 import labels_pb2_grpc as pb_grpc

Context = grpc.aio.ServicerContext[Any, Any]

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["LabelService"].full_name
"""`scorewire.v1.LabelService`, for health and reflection."""

MAX_LABELS_PER_PUT = 1000
"""Most labels one PutLabels request may carry."""
DEFAULT_PAGE_SIZE = 100
MAX_PAGE_SIZE = 1000
MAX_CLOCK_AHEAD = timedelta(minutes=5)
"""How far in the server's future a label's `created_at` may be (clock skew)."""

MAX_STORAGE_ID = 2**63 - 1
"""The largest storage id either store can hold (a signed 64-bit integer)."""
MAX_REQUEST_ID_CHARS = 128
"""Longest PutLabels request id."""
_REQUEST_ID = re.compile(rf"^[A-Za-z0-9._:-]{{1,{MAX_REQUEST_ID_CHARS}}}$")

_NOTHING_STORED = "nothing was stored, retry later"
_RETRY = "retry later"
_UNKNOWN = (
    "the label store did not confirm the write: the labels may have been stored; "
    "retry with the same request_id, which stores them at most once"
)
_UNKNOWN_NO_ID = (
    "the label store did not confirm the write: the labels may have been stored, and "
    "this request has no request_id, so a retry may store them twice (set request_id "
    "to make retries safe)"
)


def store_unavailable(err: LabelsUnavailable, then: str) -> RequestRejected:
    """UNAVAILABLE in the store's words (which name it and what happened), then `then`."""
    return RequestRejected(grpc.StatusCode.UNAVAILABLE, f"{err}: {then}")


def _check_name(value: str, field: str, out: list[FieldViolation], *, required: bool) -> None:
    if required and not value:
        out.append(FieldViolation(field, "is required"))
    elif len(value) > MAX_NAME_CHARS:
        out.append(FieldViolation(field, f"is longer than {MAX_NAME_CHARS} characters"))
    if "\x00" in value:
        out.append(FieldViolation(field, "must not contain NUL characters"))


def _created_at(msg: pb.Label, field: str, now: datetime, out: list[FieldViolation]) -> datetime:
    if not msg.HasField("created_at"):
        return now
    try:
        moment = msg.created_at.ToDatetime(tzinfo=UTC)
    except (ValueError, OverflowError):
        out.append(FieldViolation(field, "is not a valid timestamp"))
        return now
    if moment > now + MAX_CLOCK_AHEAD:
        out.append(FieldViolation(field, "is more than 5 minutes in the future (check the clock)"))
    return moment


def label_from_pb(
    msg: pb.Label,
    path: str,
    now: datetime,
    out: list[FieldViolation],
    *,
    labeller_required: bool = True,
) -> Label:
    """The domain label of `msg`; problems are appended to `out` with their field paths."""
    sample_field = join_path(path, "sample_id")
    if not msg.sample_id:
        out.append(FieldViolation(sample_field, "is required"))
    elif len(msg.sample_id.encode("utf-8")) > MAX_SAMPLE_ID_BYTES:
        out.append(FieldViolation(sample_field, f"is longer than {MAX_SAMPLE_ID_BYTES} bytes"))
    if "\x00" in msg.sample_id:
        out.append(FieldViolation(sample_field, "must not contain NUL characters"))
    if not is_output_hash(msg.output_hash):
        out.append(
            FieldViolation(
                join_path(path, "output_hash"),
                "must be the SHA-256 of the output's UTF-8 text as 64 lowercase hex digits",
            )
        )
    _check_name(msg.labeller, join_path(path, "labeller"), out, required=labeller_required)
    _check_name(msg.check, join_path(path, "check"), out, required=False)
    _check_name(msg.tenant, join_path(path, "tenant"), out, required=False)
    note_field = join_path(path, "note")
    if len(msg.note) > MAX_NOTE_CHARS:
        out.append(FieldViolation(note_field, f"is longer than {MAX_NOTE_CHARS} characters"))
    if "\x00" in msg.note:
        out.append(FieldViolation(note_field, "must not contain NUL characters"))
    return Label(
        sample_id=msg.sample_id,
        output_hash=msg.output_hash,
        passed=msg.passed,
        labeller=msg.labeller,
        created_at=_created_at(msg, join_path(path, "created_at"), now, out),
        check=msg.check or DEFAULT_CHECK,
        note=msg.note,
        tenant=msg.tenant,
    )


def label_to_pb(label: Label) -> pb.Label:
    """The wire form of a label."""
    created = timestamp_pb2.Timestamp()
    created.FromDatetime(label.created_at)
    return pb.Label(
        sample_id=label.sample_id,
        output_hash=label.output_hash,
        passed=label.passed,
        note=label.note,
        labeller=label.labeller,
        created_at=created,
        check=label.check,
        tenant=label.tenant,
    )


def owned_label(label: Label, path: str, who: Principal, out: list[FieldViolation]) -> Label:
    """`label` as `who` may write it: tenant and labeller filled in, overreach in `out`."""
    tenant = label.tenant or who.name
    labeller = label.labeller or who.name
    if who.role != Role.ADMIN and labeller != who.name:
        out.append(
            FieldViolation(
                join_path(path, "labeller"),
                f"must be empty or this token's name ({who.name}): a label records the "
                "token that wrote it",
            )
        )
    if who.role == Role.CALLER and tenant != who.name:
        out.append(
            FieldViolation(
                join_path(path, "tenant"),
                f"must be empty or this token's tenant ({who.name}): a caller token "
                "writes only its own labels",
            )
        )
    return replace(label, tenant=tenant, labeller=labeller)


def visible_query(query: LabelQuery, who: Principal | None) -> LabelQuery:
    """The query narrowed to what `who` may read; PERMISSION_DENIED when it asks for more."""
    if who is None or who.role == Role.ADMIN:
        return query
    tenant = query.tenant or who.name
    if tenant == who.name:
        return replace(query, tenant=tenant)
    if who.role == Role.LABELLER and query.labeller in ("", who.name):
        return replace(query, tenant=tenant, labeller=who.name)  # what it wrote there
    field = "labeller" if who.role == Role.LABELLER else "tenant"
    raise permission_denied(
        [
            FieldViolation(
                field,
                f"this token reads only its own tenant ({who.name})"
                + (", and in other tenants only its own labels" if field == "labeller" else ""),
            )
        ]
    )


def _put_key(request: pb.PutLabelsRequest, who: Principal | None) -> PutKey | None:
    if not request.request_id:
        return None
    if not _REQUEST_ID.match(request.request_id):
        raise invalid_argument(
            [
                FieldViolation(
                    "request_id",
                    f"must be 1 to {MAX_REQUEST_ID_CHARS} ASCII letters, digits and -_.: "
                    "(a UUID, for example)",
                )
            ]
        )
    # The labels exactly as sent: a retry sends the same bytes, a defaulted created_at
    # included (unset both times).
    sent = pb.PutLabelsRequest(labels=request.labels).SerializeToString(deterministic=True)
    return PutKey(
        scope=who.name if who is not None else "",
        request_id=request.request_id,
        fingerprint=hashlib.sha256(sent).hexdigest(),
    )


def _query_digest(query: LabelQuery) -> str:
    parts = (query.sample_id, query.output_hash, query.check, query.labeller, query.tenant)
    h = hashlib.blake2b(digest_size=8)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass") + b"\0")
    h.update(b"h" if query.include_history else b"l")
    return h.hexdigest()


def encode_page_token(after_id: int, query: LabelQuery) -> str:
    """An opaque token for the page after storage id `after_id` of this query."""
    raw = json.dumps({"after": after_id, "query": _query_digest(query)}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_page_token(token: str, query: LabelQuery) -> int:
    """The storage id a page token continues after; ValueError when it is not this query's."""
    if not token:
        return 0
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        after = data["after"]
        digest = data["query"]
    except (ValueError, TypeError, KeyError):
        raise ValueError("is not a page token of this service") from None
    if not isinstance(after, int) or isinstance(after, bool) or not 0 <= after <= MAX_STORAGE_ID:
        raise ValueError("is not a page token of this service")
    if digest != _query_digest(query):
        raise ValueError("belongs to a listing with other filters; start again without it")
    return after


def _query_from_pb(
    request: pb.ListLabelsRequest, who: Principal | None
) -> tuple[LabelQuery, int, int]:
    violations: list[FieldViolation] = []
    if request.output_hash and not is_output_hash(request.output_hash):
        violations.append(
            FieldViolation("output_hash", "must be 64 lowercase hex digits (SHA-256)")
        )
    for field in ("sample_id", "check", "labeller", "tenant"):
        if "\x00" in getattr(request, field):
            violations.append(FieldViolation(field, "must not contain NUL characters"))
    if not 0 <= request.page_size <= MAX_PAGE_SIZE:
        violations.append(FieldViolation("page_size", f"must be 0 to {MAX_PAGE_SIZE}"))
    query = LabelQuery(
        sample_id=request.sample_id,
        output_hash=request.output_hash,
        check=request.check,
        labeller=request.labeller,
        include_history=request.include_history,
        tenant=request.tenant,
    )
    if violations:
        raise invalid_argument(violations)
    query = visible_query(query, who)
    after = 0
    try:
        after = decode_page_token(request.page_token, query)
    except ValueError as err:
        violations.append(FieldViolation("page_token", str(err)))
    if violations:
        raise invalid_argument(violations)
    return query, after, request.page_size or DEFAULT_PAGE_SIZE


class LabelService(pb_grpc.LabelServiceServicer):
    """scorewire.v1.LabelService on grpc.aio, over any `LabelStore`.

    Agreement and Calibrate need a `scorer` (the ScoringService) to score cases, and a
    run `recorder` to read a recorded run (`run_id`); without the one a request needs
    they are UNIMPLEMENTED (no scorer) or UNAVAILABLE naming the missing run store. They
    read at most `max_cases` cases and try at most `max_thresholds` thresholds (the
    settings `max_agreement_cases`, `max_calibration_thresholds`).
    """

    def __init__(
        self,
        store: LabelStore,
        *,
        scorer: trust.Scorer | None = None,
        observer: trust.AgreementObserver | None = None,
        max_resamples: int = 10_000,
        recorder: RunRecorder | None = None,
        max_cases: int = 100_000,
        max_thresholds: int = 1_000,
    ) -> None:
        self._store = store
        self._scorer = scorer
        self._observer = observer
        self._max_resamples = max_resamples
        self._recorder = recorder
        self._max_cases = max_cases
        self._max_thresholds = max_thresholds

    @guarded_unary
    async def PutLabels(
        self, request: pb.PutLabelsRequest, context: Context
    ) -> pb.PutLabelsResponse:
        """Store the request's labels, all or none, durably before answering."""
        if not request.labels:
            raise invalid_argument([FieldViolation("labels", "must hold at least one label")])
        if len(request.labels) > MAX_LABELS_PER_PUT:
            raise resource_exhausted(
                "labels",
                f"{len(request.labels)} labels exceed the limit of {MAX_LABELS_PER_PUT} per call",
            )
        who = principal(context)
        key = _put_key(request, who)
        labels = _labels_to_put(request, who)
        try:
            stored = await self._store.put(labels, key)
        except RequestIdReused:
            raise invalid_argument([FieldViolation("request_id", _REUSED)]) from None
        except LabelsOutcomeUnknown:
            message = _UNKNOWN if key is not None else _UNKNOWN_NO_ID
            raise RequestRejected(grpc.StatusCode.UNAVAILABLE, message) from None
        except LabelsUnavailable as err:
            raise store_unavailable(err, _NOTHING_STORED) from None
        return pb.PutLabelsResponse(labels=[label_to_pb(lb) for lb in stored])

    @guarded_unary
    async def ListLabels(
        self, request: pb.ListLabelsRequest, context: Context
    ) -> pb.ListLabelsResponse:
        """One page of the labels matching the request's filters, oldest stored first."""
        query, after, size = _query_from_pb(request, principal(context))
        try:
            found = await self._store.list_labels(query, after_id=after, limit=size + 1)
        except LabelsUnavailable as err:
            raise store_unavailable(err, _RETRY) from None
        page = found[:size]
        token = encode_page_token(page[-1][0], query) if len(found) > size else ""
        return pb.ListLabelsResponse(
            labels=[label_to_pb(lb) for _, lb in page], next_page_token=token
        )

    async def _judge_pairs(
        self, request: pb.AgreementRequest, path: str, context: Context
    ) -> list[trust.Judged]:
        if self._scorer is None:
            raise RequestRejected(
                grpc.StatusCode.UNIMPLEMENTED, "this server scores no cases for agreement"
            )
        who = principal(context)
        query = visible_query(trust.label_query(request.labels, join_path(path, "labels")), who)
        if request.run_id:
            if self._recorder is None:
                raise unavailable()
            return await trust.recorded_pairs(
                request,
                path,
                recorder=self._recorder,
                who=who,
                describe_judge=self._scorer.describe_judge,
                store=self._store,
                query=query,
                max_cases=self._max_cases,
            )
        return await trust.judge_pairs(
            request,
            path,
            context,
            scorer=self._scorer,
            store=self._store,
            query=query,
            max_cases=self._max_cases,
        )

    @guarded_unary
    async def Agreement(
        self, request: pb.AgreementRequest, context: Context
    ) -> pb.AgreementResponse:
        """Score the cases now (or read the recorded run `run_id`) and compare each
        judge-backed check with the labels."""
        options = trust.options_from_pb(request.options, "options", self._max_resamples)
        judged = await self._judge_pairs(request, "", context)
        figures = await trust.agreements(judged, options, "")
        if self._observer is not None:
            for j, a in zip(judged, figures, strict=True):
                self._observer.observe_agreement(j.name, j.judge_model, a.kappa, a.pairs)
        return pb.AgreementResponse(
            checks=[convert.agreement_to_pb(j, a) for j, a in zip(judged, figures, strict=True)]
        )

    @guarded_unary
    async def Calibrate(
        self, request: pb.CalibrateRequest, context: Context
    ) -> pb.CalibrateResponse:
        """Score once (or read the recorded run), then the agreement at each candidate
        threshold, and the best."""
        thresholds = trust.thresholds_from_pb(request.thresholds, self._max_thresholds)
        judged = await self._judge_pairs(request.agreement, "agreement", context)
        figures = await trust.calibrations(judged, thresholds, self._max_thresholds, "agreement")
        return pb.CalibrateResponse(
            checks=[convert.calibration_to_pb(j, c) for j, c in zip(judged, figures, strict=True)]
        )


class CallerScopedLabels:
    """The label store as the scoring service's `human` checks see it: the caller's tenant.

    With auth on, every lookup is narrowed to the authenticated caller's tenant, whatever
    tenant the check context names (none, or another): a Score never reads another
    tenant's labels. With auth off, lookups pass through unchanged.
    """

    def __init__(self, store: LabelStore) -> None:
        self._store = store

    async def put(self, labels: Sequence[Label], key: PutKey | None = None) -> list[Label]:
        """Store labels (unchanged: writes go through the LabelService's rules)."""
        return await self._store.put(labels, key)

    async def lookup(
        self, sample_id: str, output_hash: str, check: str, *, tenant: str = ""
    ) -> list[Label]:
        """The counting labels of the caller's tenant (of `tenant` when auth is off)."""
        who = principal()
        if who is not None:
            tenant = who.name
        return await self._store.lookup(sample_id, output_hash, check, tenant=tenant)

    async def list_labels(
        self, query: LabelQuery, *, after_id: int, limit: int
    ) -> list[tuple[int, Label]]:
        """List labels (unchanged)."""
        return await self._store.list_labels(query, after_id=after_id, limit=limit)

    async def labels_of_outputs(
        self, query: LabelQuery, outputs: Sequence[tuple[str, str]]
    ) -> list[Label]:
        """List labels of many outputs (unchanged)."""
        return await self._store.labels_of_outputs(query, outputs)

    async def close(self) -> None:
        """Close the underlying store."""
        await self._store.close()


def add_label_service(
    server: grpc.aio.Server,
    store: LabelStore,
    *,
    scorer: trust.Scorer | None = None,
    observer: trust.AgreementObserver | None = None,
    max_resamples: int = 10_000,
    recorder: RunRecorder | None = None,
    max_cases: int = 100_000,
    max_thresholds: int = 1_000,
) -> str:
    """Register a LabelService over `store` on `server`; returns its full service name.
    With a run `recorder`, Agreement and Calibrate also read recorded runs (`run_id`)."""
    service = LabelService(
        store,
        scorer=scorer,
        observer=observer,
        max_resamples=max_resamples,
        recorder=recorder,
        max_cases=max_cases,
        max_thresholds=max_thresholds,
    )
    # Lenient deserializers: bytes that do not parse are INVALID_ARGUMENT, not UNKNOWN.
    return add_service(server, service, pb.DESCRIPTOR.services_by_name["LabelService"])


_REUSED = (
    "was already used for other labels: a retry must send the same labels, a new write "
    "needs a new request_id"
)


def _labels_to_put(request: pb.PutLabelsRequest, who: Principal | None) -> list[Label]:
    """The request's labels, each checked and, with auth on, owned by its caller:
    INVALID_ARGUMENT or PERMISSION_DENIED naming every field at fault."""
    now = utc_now()
    violations: list[FieldViolation] = []
    labels = [
        label_from_pb(msg, join_path("labels", i), now, violations, labeller_required=who is None)
        for i, msg in enumerate(request.labels)
    ]
    if violations:
        raise invalid_argument(violations)
    if who is not None:
        denials: list[FieldViolation] = []
        labels = [
            owned_label(lb, join_path("labels", i), who, denials) for i, lb in enumerate(labels)
        ]
        if denials:
            raise permission_denied(denials)
    return labels
