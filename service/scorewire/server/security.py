"""Transport security and caller authentication.

- TLS, and mutual TLS when a client CA is configured, from certificate files.
- Bearer tokens in the `authorization` metadata. The server is configured only with the
  SHA-256 hex digests of the tokens, so no token is ever in its configuration or logs;
  comparison is constant-time. A missing or wrong token is UNAUTHENTICATED.
- Each token is a `Principal`: a name (its tenant, and the labeller its labels record)
  and a role (`caller`, `labeller`, `admin`). Handlers read the caller's with
  `principal(context)`; None means auth is off.
- Per-token limits on calls in flight (RESOURCE_EXHAUSTED past the limit).
Health and reflection can stay open so that probes and grpcurl work without a token.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import inspect
import json
import re
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

import grpc
from scorewire.core.errors import StartupError
from scorewire.server.registration import drain, replace_behavior
from scorewire.settings import Settings

OPEN_PREFIXES = ("/grpc.health.v1.Health/", "/grpc.reflection.v1alpha.", "/grpc.reflection.v1.")
"""Methods left open when `auth_open_health` is set."""

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}$")
_ENTRY_KEYS = ("name", "sha256", "role")
_SETTING = "SCOREWIRE_AUTH_TOKENS"
_DIGEST_HINT = (
    "a 64-character SHA-256 hex digest (configure digests, never tokens: "
    "`printf %s TOKEN | sha256sum`)"
)
LEGACY_PREFIX_CHARS = 12
"""Hex digits of a digest that name a token from SCOREWIRE_AUTH_TOKEN_SHA256."""


class Role(StrEnum):
    """What a token may do beyond calling the scoring service."""

    CALLER = "caller"
    """Reads and writes its own tenant's labels only."""
    LABELLER = "labeller"
    """A caller that may also write labels into other tenants (always as itself), and
    list the labels it wrote there: a person who labels other teams' outputs."""
    ADMIN = "admin"
    """Reads every tenant's labels and writes into any tenant under any labeller name
    (imports of labels made elsewhere)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated caller of one call."""

    name: str
    """The token's name: its tenant, and the labeller its labels record."""
    role: Role
    """What the token may do."""


current_token: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "scorewire_token_digest", default=None
)
"""The authenticated caller's token digest for the current call (None when auth is off)."""

current_principal: contextvars.ContextVar[Principal | None] = contextvars.ContextVar(
    "scorewire_principal", default=None
)
"""The authenticated caller of the current call (None when auth is off)."""


def principal(context: object = None) -> Principal | None:
    """The principal of the call being handled, or None when auth is off.

    The interceptor sets it for the handler's task, so `context` (the handler's
    ServicerContext) is accepted for readability only.
    """
    return current_principal.get()


def parse_token_digests(raw: str) -> frozenset[str]:
    """Comma-separated SHA-256 hex digests -> set; anything else is a configuration error."""
    digests = [d.strip().lower() for d in raw.split(",") if d.strip()]
    bad = [i for i, d in enumerate(digests) if not _HEX64.match(d)]
    if bad:
        # Never echo the value: someone may have pasted a token instead of its digest.
        raise ValueError(f"SCOREWIRE_AUTH_TOKEN_SHA256 entry {bad[0] + 1} is not {_DIGEST_HINT}")
    return frozenset(digests)


def _entry_error(index: int, problem: str) -> ValueError:
    return ValueError(f"{_SETTING} entry {index + 1}: {problem}")


def _principal_entry(index: int, entry: object) -> tuple[str, Principal]:
    if not isinstance(entry, dict):
        raise _entry_error(index, 'must be an object {"name", "sha256", "role"}')
    unknown = sorted(k for k in entry if k not in _ENTRY_KEYS)
    if unknown:
        key = unknown[0]
        shown = repr(key) if isinstance(key, str) and _NAME.match(key) else "a key"
        raise _entry_error(index, f"has unknown key {shown} (allowed: name, sha256, role)")
    name, digest, role = (entry.get(k) for k in _ENTRY_KEYS)
    # Values are never echoed: someone may have pasted a token into any of them.
    if not isinstance(name, str) or not _NAME.match(name):
        raise _entry_error(
            index, "name must be 1-64 characters of A-Za-z0-9._:@-, the first a letter or digit"
        )
    if not isinstance(digest, str) or not _HEX64.match(digest.strip().lower()):
        raise _entry_error(index, f"sha256 is not {_DIGEST_HINT}")
    if role not in tuple(Role):
        raise _entry_error(index, "role must be caller, labeller or admin")
    return digest.strip().lower(), Principal(name, Role(role))


def parse_auth_tokens(raw: str) -> dict[str, Principal]:
    """SCOREWIRE_AUTH_TOKENS (a JSON list) -> {digest: Principal}; ValueError when malformed."""
    if not raw.strip():
        return {}
    try:
        entries = json.loads(raw)
    except ValueError:
        raise ValueError(f"{_SETTING} is not valid JSON") from None
    if not isinstance(entries, list):
        raise ValueError(f'{_SETTING} must be a JSON list of {{"name", "sha256", "role"}}')
    found: dict[str, Principal] = {}
    for index, entry in enumerate(entries):
        digest, who = _principal_entry(index, entry)
        if digest in found:
            raise _entry_error(index, f"has the same sha256 as the token {found[digest].name!r}")
        found[digest] = who
    return found


def principals_from_settings(settings: Settings) -> dict[str, Principal]:
    """Every accepted token digest and its principal: named tokens, then legacy digests.

    A legacy digest (SCOREWIRE_AUTH_TOKEN_SHA256) is a `caller` named `sha256:` and the
    digest's first 12 hex digits. Names must be unique: a name is a tenant.
    """
    found = parse_auth_tokens(settings.auth_tokens)
    for digest in sorted(parse_token_digests(settings.auth_token_sha256)):
        if digest in found:
            raise ValueError(
                f"SCOREWIRE_AUTH_TOKEN_SHA256 repeats the digest of the token "
                f"{found[digest].name!r} of {_SETTING}"
            )
        found[digest] = Principal(f"sha256:{digest[:LEGACY_PREFIX_CHARS]}", Role.CALLER)
    names: set[str] = set()
    for who in found.values():
        if who.name in names:
            raise ValueError(f"{_SETTING}: the name {who.name!r} is used by two tokens")
        names.add(who.name)
    return found


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials from the configured files, or None for plaintext."""
    if not settings.tls_cert and not settings.tls_key:
        if settings.tls_client_ca:
            raise StartupError(
                "SCOREWIRE_TLS_CLIENT_CA needs TLS: set SCOREWIRE_TLS_CERT and SCOREWIRE_TLS_KEY"
            )
        return None
    if not (settings.tls_cert and settings.tls_key):
        raise StartupError("TLS needs both SCOREWIRE_TLS_CERT and SCOREWIRE_TLS_KEY: set the other")
    cert = _read_pem("SCOREWIRE_TLS_CERT", settings.tls_cert)
    key = _read_pem("SCOREWIRE_TLS_KEY", settings.tls_key)
    ca = (
        _read_pem("SCOREWIRE_TLS_CLIENT_CA", settings.tls_client_ca)
        if settings.tls_client_ca
        else None
    )
    _check_tls_files(settings)
    return grpc.ssl_server_credentials(
        [(key, cert)], root_certificates=ca, require_client_auth=ca is not None
    )


def _read_pem(name: str, path: str) -> bytes:
    """The bytes of a PEM file, or a one-line StartupError naming its setting."""
    try:
        data = Path(path).read_bytes()
    except OSError as err:
        raise StartupError(
            f"{name}={path!r} cannot be read ({err.strerror}): give the path of a PEM file"
        ) from None
    if b"-----BEGIN " not in data:
        raise StartupError(f"{name}={path!r} is not a PEM file (no -----BEGIN line)")
    return data


def _check_tls_files(settings: Settings) -> None:
    """Load the files with Python's ssl first: grpc's core would log several lines of its
    own for a bad file and then fail the bind with a message naming no file."""
    assert settings.tls_cert and settings.tls_key
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(settings.tls_cert, settings.tls_key)
    except ssl.SSLError as err:
        raise StartupError(
            f"SCOREWIRE_TLS_CERT={settings.tls_cert!r} and SCOREWIRE_TLS_KEY="
            f"{settings.tls_key!r} do not load as a certificate chain and its key "
            f"({err.reason or err}): give the PEM chain and the private key of that certificate"
        ) from None
    if settings.tls_client_ca:
        try:
            context.load_verify_locations(cafile=settings.tls_client_ca)
        except ssl.SSLError as err:
            raise StartupError(
                f"SCOREWIRE_TLS_CLIENT_CA={settings.tls_client_ca!r} does not load as PEM "
                f"CA certificates ({err.reason or err})"
            ) from None


def _raw(data: bytes) -> bytes:
    """A refused call's request bytes, left unparsed."""
    return data


def _aborting(code: grpc.StatusCode, message: str) -> Callable[[Callable[..., Any], bool], Any]:
    def wrap(_behavior: Callable[..., Any], streams: bool) -> Callable[..., Any]:
        if streams:

            async def deny_stream(request: Any, context: Any) -> AsyncIterator[Any]:
                if hasattr(request, "__aiter__"):  # a client stream: its bytes, unparsed
                    await drain(request)
                await context.abort(code, message)
                yield  # pragma: no cover - abort raises

            return deny_stream

        async def deny(request: Any, context: Any) -> Any:
            await context.abort(code, message)

        return deny

    return wrap


class AuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[type-arg]
    """Checks bearer tokens and enforces the per-token limit on calls in flight."""

    def __init__(
        self,
        principals: Mapping[str, Principal],
        *,
        open_health: bool = True,
        max_in_flight_per_token: int = 0,
    ) -> None:
        self._principals = dict(principals)
        self._digests = tuple(self._principals)
        self._open = OPEN_PREFIXES if open_health else ()
        self._limit = max_in_flight_per_token
        self._in_flight: dict[str, int] = {}

    def _authenticate(
        self, metadata: Iterable[tuple[str, Any]] | None
    ) -> tuple[str, Principal] | None:
        for key, value in metadata or ():
            if key == "authorization" and isinstance(value, str):
                scheme, _, token = value.partition(" ")
                if scheme.lower() != "bearer" or not token:
                    return None
                digest = hashlib.sha256(token.strip().encode("utf-8")).hexdigest()
                # Compare against every digest so timing does not reveal which matched.
                ok = False
                for d in self._digests:
                    ok |= hmac.compare_digest(digest, d)
                return (digest, self._principals[digest]) if ok else None
        return None

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any]]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any]:
        """Authenticate, then run the call under the token's in-flight limit."""
        method: str = getattr(details, "method", "") or ""
        handler = await continuation(details)
        if handler is None or (self._open and method.startswith(self._open)):
            return handler
        found = self._authenticate(getattr(details, "invocation_metadata", None))
        if found is None:
            return replace_behavior(
                handler,
                _aborting(grpc.StatusCode.UNAUTHENTICATED, "missing or invalid bearer token"),
                request_deserializer=_raw,
            )
        return replace_behavior(handler, self._limited(*found))

    def _limited(self, digest: str, who: Principal) -> Callable[[Callable[..., Any], bool], Any]:
        def wrap(behavior: Callable[..., Any], streams: bool) -> Callable[..., Any]:
            # A streaming handler is an async generator, or a coroutine that writes with
            # `context.write` (grpc_health's Watch): wrap each as what it is.
            if streams and not inspect.iscoroutinefunction(behavior):

                async def stream(request: Any, context: Any) -> AsyncIterator[Any]:
                    await self._enter(digest, who, context)
                    try:
                        async for item in behavior(request, context):
                            yield item
                    finally:
                        self._leave(digest)

                return stream

            async def unary(request: Any, context: Any) -> Any:
                await self._enter(digest, who, context)
                try:
                    return await behavior(request, context)
                finally:
                    self._leave(digest)

            return unary

        return wrap

    async def _enter(self, digest: str, who: Principal, context: Any) -> None:
        current_token.set(digest)
        current_principal.set(who)
        n = self._in_flight.get(digest, 0)
        if self._limit and n >= self._limit:
            await context.abort(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"this token already has {n} calls in flight "
                f"(max_in_flight_per_token {self._limit})",
            )
        self._in_flight[digest] = n + 1

    def _leave(self, digest: str) -> None:
        n = self._in_flight.get(digest, 1) - 1
        if n <= 0:
            self._in_flight.pop(digest, None)
        else:
            self._in_flight[digest] = n


def auth_interceptor(settings: Settings) -> AuthInterceptor | None:
    """The interceptor the settings ask for, or None when auth is off."""
    principals = principals_from_settings(settings)
    if not principals:
        return None
    return AuthInterceptor(
        principals,
        open_health=settings.auth_open_health,
        max_in_flight_per_token=settings.max_in_flight_per_token,
    )
