"""Redis URLs as the README documents them, and the connection settings they make.

    redis://[[user]:password@]host[:port][/db]     plain TCP; `user` is an ACL user
    rediss://[[user]:password@]host[:port][/db]    TLS; the CA is `SCOREWIRE_REDIS_TLS_CA`

An ACL user name is kept (Redis 6+ `AUTH user password`); without one the password is
the `default` user's (`requirepass`). Sentinel and Cluster URLs are refused with a
message saying so: the verdict cache's client (a plain redis-py one) speaks to one node
only, and its scripts read and write keys in different Cluster slots, so high
availability comes from a managed endpoint or a proxy in front of the primary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

SCHEMES = ("redis", "rediss")


@dataclass(frozen=True, slots=True)
class RedisTarget:
    """Where one Redis is and how to log in: what a `redis://` URL says."""

    host: str
    port: int
    db: int
    username: str | None
    password: str | None
    tls: bool

    def describe(self) -> str:
        """The address without credentials (for logs)."""
        scheme = "rediss" if self.tls else "redis"
        return f"{scheme}://{self.host}:{self.port}/{self.db}"

    def connection_kwargs(self, *, tls_ca: str | None, timeout_s: float) -> dict[str, Any]:
        """redis-py connection keyword arguments (credentials, TLS, timeouts)."""
        kwargs: dict[str, Any] = {
            "username": self.username,
            "password": self.password,
            "socket_timeout": timeout_s,
            "socket_connect_timeout": timeout_s,
        }
        if self.tls:
            kwargs["ssl_cert_reqs"] = "required"
            kwargs["ssl_check_hostname"] = True
            if tls_ca:
                kwargs["ssl_ca_certs"] = tls_ca
        return kwargs


def parse_redis_url(url: str, what: str = "the Redis URL") -> RedisTarget:
    """Read `redis://` or `rediss://`; ValueError (naming `what`) for anything else."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    if scheme in ("redis+sentinel", "redis-sentinel", "sentinel", "redis+cluster"):
        raise ValueError(
            f"{what}: Sentinel and Cluster URLs are not supported; point it at the primary "
            "(or a proxy in front of it) with redis:// or rediss://"
        )
    if scheme not in SCHEMES:
        raise ValueError(f"{what} must start with redis:// or rediss://")
    path = (parts.path or "/0").lstrip("/") or "0"
    if not path.isdigit():
        raise ValueError(f"{what}: the Redis database must be a number")
    try:
        port = parts.port or 6379
    except ValueError:
        raise ValueError(f"{what}: the port must be a number") from None
    return RedisTarget(
        host=parts.hostname or "127.0.0.1",
        port=port,
        db=int(path),
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
        tls=scheme == "rediss",
    )


def redis_client(
    target: RedisTarget,
    *,
    tls_ca: str | None,
    timeout_s: float,
    pool_size: int,
    decode_responses: bool = True,
) -> Any:
    """An asyncio redis-py client for `target` that fails fast (no retries, short timeouts);
    `decode_responses=False` answers bytes (binary values: the observation queue)."""
    from redis.asyncio import BlockingConnectionPool, Redis, SSLConnection
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    kwargs = target.connection_kwargs(tls_ca=tls_ca, timeout_s=timeout_s)
    if target.tls:
        kwargs["connection_class"] = SSLConnection
    pool = BlockingConnectionPool(
        host=target.host,
        port=target.port,
        db=target.db,
        max_connections=pool_size,
        timeout=timeout_s,
        retry=Retry(NoBackoff(), 0),
        decode_responses=decode_responses,
        **kwargs,
    )
    return Redis(connection_pool=pool)
