"""A real, throwaway Redis for tests: loopback only, no persistence, stoppable mid-test.

    with RedisServer() as redis:          # starts redis-server on a free port
        url = redis.url                   # redis://127.0.0.1:<port>/0
        redis.stop(); redis.start()       # simulate an outage, then recovery
        with redis.frozen(): ...          # a hung Redis (SIGSTOP), resumed after the block

    RedisServer(users={"app": "pw"})      # ACL user `app` (the default user disabled)
    RedisServer(tls=pki)                  # TLS only (`tests.support.pki`): rediss://localhost

`redis-server` must be on PATH (`apt-get install -y redis-server`; `make test` installs
it); without it the `redis_server` fixture skips with a message saying so, and fails
under CI (tests.support.components).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.components import require_binary
from tests.support.servers import free_port


class RedisServer:
    """One `redis-server` child process on a fixed free port (kept across restarts).

    `users` (name -> password) become ACL users with every right, and the `default` user
    is turned off, so a client that drops the user name cannot log in. `tls` (the
    `tests.support.pki` files) makes the port TLS-only, with the server certificate for
    `localhost`; clients need not present one.
    """

    def __init__(
        self,
        port: int | None = None,
        *,
        users: dict[str, str] | None = None,
        tls: dict[str, Any] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.users = dict(users or {})
        self.tls = tls
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """`redis://127.0.0.1:<port>/0` (`rediss://localhost:<port>/0` with TLS)."""
        if self.tls is not None:
            return f"rediss://localhost:{self.port}/0"
        return f"redis://127.0.0.1:{self.port}/0"

    def _args(self) -> list[str]:
        args: list[str] = []
        for name, password in self.users.items():
            # One argument per word: redis-server quotes each argument as one token.
            args += ["--user", name, "on", f">{password}", "~*", "&*", "+@all"]
        if self.users:
            args += ["--user", "default", "off"]
        if self.tls is not None:
            args += [
                "--port", "0",
                "--tls-port", str(self.port),
                "--tls-cert-file", str(self.tls["srv_cert_path"]),
                "--tls-key-file", str(self.tls["srv_key_path"]),
                "--tls-ca-cert-file", str(self.tls["ca_path"]),
                "--tls-auth-clients", "no",
            ]  # fmt: skip
        else:
            args += ["--port", str(self.port)]
        return args

    @property
    def running(self) -> bool:
        """Whether the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = 10.0) -> None:
        """Start redis-server and wait until it answers PING."""
        binary = shutil.which("redis-server")
        if binary is None:
            raise RuntimeError("redis-server is not installed (apt-get install -y redis-server)")
        self._proc = subprocess.Popen(
            [
                binary,
                *self._args(),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--protected-mode", "yes",
                "--loglevel", "warning",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self._proc.returncode}")
            if self.ping():
                return
            time.sleep(0.02)
        self.stop()
        raise RuntimeError("redis-server did not answer PING in time")

    def ping(self) -> bool:
        """Whether Redis answers (a raw RESP exchange, no client library): PONG, or with
        ACL users the NOAUTH refusal, which a server only sends once it is up."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as raw:
                if self.tls is None:
                    return _pinged(raw)
                ctx = ssl.create_default_context(cafile=str(self.tls["ca_path"]))
                with ctx.wrap_socket(raw, server_hostname="localhost") as s:
                    return _pinged(s)
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the process (SIGTERM, then SIGKILL) and wait for it."""
        proc, self._proc = self._proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """The process stopped (SIGSTOP) inside the block and resumed after it whatever
        happens: connections stay open and new ones are accepted, but nothing answers."""
        assert self._proc is not None, "start the server first"
        pid = self._proc.pid
        os.kill(pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.kill(pid, signal.SIGCONT)

    def restart(self) -> None:
        """Stop and start again on the same port (the data is gone: no persistence)."""
        self.stop()
        self.start()

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _pinged(s: socket.socket) -> bool:
    s.sendall(b"PING\r\n")
    answer = s.recv(64)
    return answer.startswith(b"+PONG") or answer.startswith(b"-NOAUTH")


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A fresh Redis for one test; skips (fails under CI) when redis-server is missing."""
    require_binary("redis-server", "redis-server")
    with RedisServer() as server:
        yield server
