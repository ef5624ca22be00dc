"""Tenants over a real TLS server with bearer tokens on: whose labels a token reads and writes.

Every token has a name and a role (`SCOREWIRE_AUTH_TOKENS`); a label belongs to a tenant
(the token name it was written under) and records the writing token's name as labeller.
Each case runs on SQLite and on a real PostgreSQL.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import AsyncIterator

import grpc
import pytest
from google.protobuf import json_format
from scorewire.labels.label_model import LabelQuery, output_hash
from scorewire.labels.postgres import PostgresLabelStore
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.server.labels_service import _query_digest
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as spb

from tests.labels.conftest import LabelServer, start_label_server

HASH = output_hash("Paris")
ROLES = {"checkout": "caller", "search": "caller", "ana": "labeller", "root": "admin"}
LEGACY_TOKEN = "legacy-token-of-an-old-deployment"
LEGACY_DIGEST = hashlib.sha256(LEGACY_TOKEN.encode()).hexdigest()
LEGACY_NAME = f"sha256:{LEGACY_DIGEST[:12]}"


def token(name: str) -> str:
    return f"token-of-{name}-0123456789"


def auth_tokens() -> str:
    return json.dumps(
        [
            {"name": n, "sha256": hashlib.sha256(token(n).encode()).hexdigest(), "role": r}
            for n, r in ROLES.items()
        ]
    )


def md(name: str) -> tuple[tuple[str, str], ...]:
    secret = LEGACY_TOKEN if name == LEGACY_NAME else token(name)
    return (("authorization", f"Bearer {secret}"),)


def pb_label(**fields) -> lpb.Label:
    base = {"sampleId": "s1", "outputHash": HASH, "passed": True}
    return json_format.ParseDict(base | fields, lpb.Label())


@pytest.fixture(params=["sqlite", "postgres"])
async def store(request, tmp_path) -> AsyncIterator[object]:
    if request.param == "sqlite":
        opened: object = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    else:
        opened = await PostgresLabelStore.open(request.getfixturevalue("pg_url"))
    try:
        yield opened
    finally:
        await opened.close()  # type: ignore[attr-defined]


@pytest.fixture
async def srv(store, pki) -> AsyncIterator[LabelServer]:
    creds = grpc.ssl_channel_credentials(root_certificates=pki["ca"])
    server = await start_label_server(
        store,
        credentials=creds,
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        auth_tokens=auth_tokens(),
        auth_token_sha256=LEGACY_DIGEST,
    )
    try:
        yield server
    finally:
        await server.channel.close()
        await server.stop()


async def put(srv: LabelServer, who: str, *labels: lpb.Label, **request) -> lpb.PutLabelsResponse:
    msg = lpb.PutLabelsRequest(labels=labels, **request)
    return await srv.labels.PutLabels(msg, metadata=md(who), timeout=10)


async def listed(srv: LabelServer, who: str, **filters) -> list[tuple[str, str, bool]]:
    """(tenant, labeller, passed) of every label `who` may list with these filters."""
    resp = await srv.labels.ListLabels(
        lpb.ListLabelsRequest(include_history=True, **filters), metadata=md(who), timeout=10
    )
    return [(lb.tenant, lb.labeller, lb.passed) for lb in resp.labels]


async def denied(call) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call
    assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED, err.value.details()
    return err.value


async def test_a_caller_lists_only_its_own_tenants_labels(srv) -> None:
    # Finding 4: any token listed any other token's labels and notes.
    await put(srv, "checkout", pb_label(note="checkout's private remark"))
    await put(srv, "search", pb_label(passed=False))
    assert await listed(srv, "checkout") == [("checkout", "checkout", True)]
    assert await listed(srv, "search") == [("search", "search", False)]
    # Naming another tenant in the filter is refused, not silently emptied.
    err = await denied(
        srv.labels.ListLabels(lpb.ListLabelsRequest(tenant="search"), metadata=md("checkout"))
    )
    assert "tenant" in (err.details() or "")


async def test_the_labeller_recorded_is_the_token_name(srv) -> None:
    # An empty labeller is filled in with the token's name; the token's own name is accepted.
    resp = await put(srv, "checkout", pb_label(), pb_label(sampleId="s2", labeller="checkout"))
    assert [(lb.labeller, lb.tenant) for lb in resp.labels] == [("checkout", "checkout")] * 2


async def test_a_caller_cannot_write_as_another_labeller(srv) -> None:
    # Finding 4: any token overwrote any label by writing under another labeller's name.
    await put(srv, "checkout", pb_label(passed=True))
    err = await denied(put(srv, "search", pb_label(passed=False, labeller="checkout")))
    assert "labels[0].labeller" in (err.details() or "")
    assert await listed(srv, "checkout") == [("checkout", "checkout", True)]


async def test_a_caller_cannot_write_into_another_tenant(srv) -> None:
    err = await denied(put(srv, "search", pb_label(passed=False, tenant="checkout")))
    assert "labels[0].tenant" in (err.details() or "")
    assert await listed(srv, "checkout") == []


async def test_a_labeller_labels_other_tenants_outputs_under_its_own_name(srv) -> None:
    # The labeller role may write into any tenant, always as itself, and sees only
    # what it wrote there; the tenant sees the labeller's verdicts beside its own.
    await put(srv, "checkout", pb_label(passed=True, note="mine"))
    resp = await put(srv, "ana", pb_label(passed=False, tenant="checkout"))
    assert [(lb.tenant, lb.labeller) for lb in resp.labels] == [("checkout", "ana")]
    await denied(put(srv, "ana", pb_label(tenant="checkout", labeller="checkout")))
    assert await listed(srv, "ana", tenant="checkout") == [("checkout", "ana", False)]
    assert await listed(srv, "ana") == []  # its own tenant holds nothing
    assert sorted(await listed(srv, "checkout")) == [
        ("checkout", "ana", False),
        ("checkout", "checkout", True),
    ]
    assert await listed(srv, "search") == []


async def test_an_admin_reads_every_tenant_and_writes_for_anyone(srv) -> None:
    await put(srv, "checkout", pb_label())
    await put(srv, "search", pb_label(passed=False))
    # An admin may import labels made elsewhere, under the labeller who made them.
    await put(srv, "root", pb_label(sampleId="s9", tenant="search", labeller="bo (import)"))
    assert sorted(await listed(srv, "root")) == [
        ("checkout", "checkout", True),
        ("search", "bo (import)", True),
        ("search", "search", False),
    ]
    assert [t for t, _, _ in await listed(srv, "root", tenant="search")] == ["search", "search"]


async def test_a_legacy_digest_is_a_caller_named_by_its_digest_prefix(srv) -> None:
    # SCOREWIRE_AUTH_TOKEN_SHA256 keeps working: each digest is a caller named sha256:<12 hex>.
    resp = await put(srv, LEGACY_NAME, pb_label())
    assert [(lb.tenant, lb.labeller) for lb in resp.labels] == [(LEGACY_NAME, LEGACY_NAME)]
    await put(srv, "checkout", pb_label(passed=False))
    assert await listed(srv, LEGACY_NAME) == [(LEGACY_NAME, LEGACY_NAME, True)]
    await denied(put(srv, LEGACY_NAME, pb_label(tenant="checkout")))


async def test_request_ids_belong_to_their_tenant(srv) -> None:
    # Two tenants choosing the same request id do not collide (nor learn of each other).
    await put(srv, "checkout", pb_label(), request_id="put-1")
    await put(srv, "search", pb_label(passed=False), request_id="put-1")
    assert await listed(srv, "checkout") == [("checkout", "checkout", True)]
    assert await listed(srv, "search") == [("search", "search", False)]


async def test_label_calls_without_a_token_are_unauthenticated(srv) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await srv.labels.ListLabels(lpb.ListLabelsRequest(), timeout=10)
    assert err.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_score_reads_only_its_own_tenants_labels(srv) -> None:
    # checkout labelled the output a pass; search's human check must not see it (the
    # server scopes lookups to the caller, whatever tenant the check context names).
    await put(srv, "checkout", pb_label())
    request = json_format.ParseDict(
        {"sample": {"id": "s1"}, "output": {"text": "Paris"}, "checks": [{"type": "human"}]},
        spb.ScoreRequest(),
    )
    mine = await srv.scoring.Score(request, metadata=md("checkout"), timeout=10)
    theirs = await srv.scoring.Score(request, metadata=md("search"), timeout=10)
    assert mine.scores[0].passed
    assert not theirs.scores[0].passed and theirs.scores[0].reason == "no label for this output"


async def test_malformed_input_with_a_token_is_invalid_argument_and_without_unauthenticated(
    srv,
) -> None:
    # Undecodable bytes and a crafted page token past 2^63 are the caller's input; a
    # caller without a token learns nothing about how its bytes would have parsed.
    raw = srv.channel.unary_unary("/scorewire.v1.LabelService/PutLabels")
    bad = b"\x0a\x04\x0a\x02\xff\xfe"  # labels { sample_id: <invalid UTF-8> }
    for metadata, code in ((md("checkout"), "INVALID_ARGUMENT"), ((), "UNAUTHENTICATED")):
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await raw(bad, metadata=metadata, timeout=10)
        assert err.value.code().name == code
    query = LabelQuery(tenant="checkout")  # what a caller's listing is narrowed to
    raw_token = json.dumps({"after": 2**63, "query": _query_digest(query)}).encode()
    token_text = base64.urlsafe_b64encode(raw_token).decode().rstrip("=")
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await srv.labels.ListLabels(
            lpb.ListLabelsRequest(page_token=token_text), metadata=md("checkout"), timeout=10
        )
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "page_token" in (err.value.details() or "")
