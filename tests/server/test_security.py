"""TLS, mutual TLS and bearer tokens, with certificates generated at test time."""

import asyncio
import hashlib
import json

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scorewire.server.security import parse_token_digests, principals_from_settings
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.server import custom_checks
from tests.server.conftest import start_server
from tests.support.wait import wait_until_async

TOKEN = "s3cret-token-for-tests"
DIGEST = hashlib.sha256(TOKEN.encode()).hexdigest()


REQ = pb.ScoreRequest(output=pb.Output(text="hello"), compact=["contains:hello"])


async def test_tls_serves_clients_that_trust_the_ca(pki) -> None:
    # A TLS server answers a client that verifies it against the CA.
    srv = await start_server(tls_cert=str(pki["srv_cert_path"]), tls_key=str(pki["srv_key_path"]))
    creds = grpc.ssl_channel_credentials(root_certificates=pki["ca"])
    port = srv.address.rsplit(":", 1)[1]
    try:
        async with grpc.aio.secure_channel(f"localhost:{port}", creds) as ch:
            resp = await scoring_pb2_grpc.ScoringServiceStub(ch).Score(REQ, timeout=10)
            assert resp.passed
        async with grpc.aio.insecure_channel(f"localhost:{port}") as plain:
            # A plaintext client cannot talk to a TLS server.
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await scoring_pb2_grpc.ScoringServiceStub(plain).Score(REQ, timeout=5)
            assert exc.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_mutual_tls_requires_a_client_certificate(pki) -> None:
    # With a client CA, only clients presenting a certificate it signed get in.
    srv = await start_server(
        tls_cert=str(pki["srv_cert_path"]),
        tls_key=str(pki["srv_key_path"]),
        tls_client_ca=str(pki["ca_path"]),
    )
    port = srv.address.rsplit(":", 1)[1]
    try:
        good = grpc.ssl_channel_credentials(pki["ca"], pki["cli_key"], pki["cli_cert"])
        async with grpc.aio.secure_channel(f"localhost:{port}", good) as ch:
            assert (await scoring_pb2_grpc.ScoringServiceStub(ch).Score(REQ, timeout=10)).passed
        anonymous = grpc.ssl_channel_credentials(pki["ca"])
        async with grpc.aio.secure_channel(f"localhost:{port}", anonymous) as ch:
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await scoring_pb2_grpc.ScoringServiceStub(ch).Score(REQ, timeout=5)
            assert exc.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_bearer_tokens_are_checked_against_digests() -> None:
    # The right token passes; a missing or wrong one is UNAUTHENTICATED; health stays open.
    srv = await start_server(auth_token_sha256=f"{'0' * 64},{DIGEST}")
    stub = srv.stub
    try:
        ok = await stub.Score(REQ, metadata=(("authorization", f"Bearer {TOKEN}"),))
        assert ok.passed
        for md in ((), (("authorization", "Bearer wrong"),), (("authorization", TOKEN),)):
            with pytest.raises(grpc.aio.AioRpcError) as exc:
                await stub.Score(REQ, metadata=md)
            assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert TOKEN not in (exc.value.details() or "")
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            async for _ in stub.RunSuite(pb.RunSuiteRequest(compact=["json_valid"])):
                pass
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
        health = health_pb2_grpc.HealthStub(srv.channel)
        resp = await health.Check(health_pb2.HealthCheckRequest())
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_health_can_be_closed_too() -> None:
    # auth_open_health=false puts health behind the token as well.
    srv = await start_server(auth_token_sha256=DIGEST, auth_open_health=False)
    try:
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await health_pb2_grpc.HealthStub(srv.channel).Check(health_pb2.HealthCheckRequest())
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_per_token_in_flight_limit() -> None:
    # A token over its in-flight limit is RESOURCE_EXHAUSTED; others are unaffected.
    srv = await start_server(auth_token_sha256=DIGEST, max_in_flight_per_token=2)
    md = (("authorization", f"Bearer {TOKEN}"),)
    slow = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.slow")])
    slow.sample.metadata["sleep"] = 0.5
    try:
        started = custom_checks.STARTED["slow"]
        calls = [asyncio.ensure_future(srv.stub.Score(slow, metadata=md)) for _ in range(2)]
        await wait_until_async(
            lambda: custom_checks.STARTED["slow"] == started + 2, "both slow calls to run"
        )
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await srv.stub.Score(REQ, metadata=md)
        assert exc.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "max_in_flight_per_token" in exc.value.details()
        assert all(r.passed for r in await asyncio.gather(*calls))
        assert (await srv.stub.Score(REQ, metadata=md)).passed  # slots are given back
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


def test_configuring_a_token_instead_of_a_digest_is_refused_without_echoing_it() -> None:
    # A plain token in the digest setting is a configuration error that never shows it.
    with pytest.raises(ValueError) as exc:
        parse_token_digests(TOKEN)
    assert TOKEN not in str(exc.value)


# ---- named tokens with roles ------------------------------------------------------------------

NAMED = json.dumps([{"name": "checkout", "sha256": DIGEST, "role": "caller"}])


async def test_health_watch_behind_the_token_streams_for_an_authenticated_caller() -> None:
    # Finding 6: with health closed, Watch by a caller with a good token was UNKNOWN.
    srv = await start_server(auth_tokens=NAMED, auth_open_health=False)
    health = health_pb2_grpc.HealthStub(srv.channel)
    try:
        call = health.Watch(
            health_pb2.HealthCheckRequest(), metadata=(("authorization", f"Bearer {TOKEN}"),)
        )
        first = await asyncio.wait_for(call.read(), 10)
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        call.cancel()
        anonymous = health.Watch(health_pb2.HealthCheckRequest())
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await asyncio.wait_for(anonymous.read(), 10)
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def test_bytes_that_do_not_parse_are_invalid_argument_on_health_too(server) -> None:
    # Every service, not only scorewire's own: a string field with invalid UTF-8.
    raw = server.channel.unary_unary("/grpc.health.v1.Health/Check")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await raw(b"\x0a\x02\xff\xfe", timeout=10)
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    watch = server.channel.unary_stream("/grpc.health.v1.Health/Watch")
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        async for _ in watch(b"\x0a\x02\xff\xfe", timeout=10):
            pass
    assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Reflection reads a stream of requests: a bad message in it ends the call the same way,
    # under both versions of the service.
    for version in ("v1alpha", "v1"):
        reflect = server.channel.stream_stream(
            f"/grpc.reflection.{version}.ServerReflection/ServerReflectionInfo"
        )

        async def requests():
            yield b"\x0a\x02\xff\xfe"  # host: <invalid UTF-8>

        with pytest.raises(grpc.aio.AioRpcError) as exc:
            async for _ in reflect(requests(), timeout=10):
                pass
        assert exc.value.code() == grpc.StatusCode.INVALID_ARGUMENT, version


async def test_named_tokens_and_legacy_digests_authenticate_together() -> None:
    other = "another-token-for-tests"
    srv = await start_server(
        auth_tokens=NAMED, auth_token_sha256=hashlib.sha256(other.encode()).hexdigest()
    )
    try:
        for secret in (TOKEN, other):
            ok = await srv.stub.Score(REQ, metadata=(("authorization", f"Bearer {secret}"),))
            assert ok.passed
        with pytest.raises(grpc.aio.AioRpcError) as exc:
            await srv.stub.Score(REQ, metadata=(("authorization", "Bearer nope"),))
        assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


def _entry(**fields: object) -> dict[str, object]:
    return {"name": "checkout", "sha256": DIGEST, "role": "caller"} | fields


@pytest.mark.parametrize(
    ("entries", "says"),
    [
        ([_entry(role="root")], "role"),
        ([_entry(sha256=TOKEN)], "sha256"),
        ([_entry(name="")], "name"),
        ([_entry(name="has space")], "name"),
        ([_entry(), _entry(sha256="1" * 64)], "name 'checkout'"),
        ([_entry(), _entry(name="search")], "same sha256"),
        ([_entry(extra=1)], "extra"),
        ({"name": "checkout"}, "list"),
    ],
)
def test_bad_token_entries_are_refused_naming_the_entry(entries, says) -> None:
    # A configuration error names the setting and entry, and never echoes a token.
    with pytest.raises(ValueError) as exc:
        principals_from_settings(Settings(auth_tokens=json.dumps(entries)))
    assert "SCOREWIRE_AUTH_TOKENS" in str(exc.value) and says in str(exc.value)
    assert TOKEN not in str(exc.value)


def test_not_json_is_refused_without_echoing_it() -> None:
    with pytest.raises(ValueError) as exc:
        principals_from_settings(Settings(auth_tokens=TOKEN))
    assert "SCOREWIRE_AUTH_TOKENS" in str(exc.value) and TOKEN not in str(exc.value)


def test_a_legacy_digest_is_a_caller_named_by_its_prefix() -> None:
    (p,) = principals_from_settings(Settings(auth_token_sha256=DIGEST)).values()
    assert (p.name, p.role) == (f"sha256:{DIGEST[:12]}", "caller")
