"""A real L7 gRPC proxy in front of given backends: nginx (`grpc_pass`) or HAProxy.

    with GrpcProxy("nginx", ["127.0.0.1:5001", "127.0.0.1:5002"]) as proxy:
        channel = grpc.insecure_channel(proxy.address)   # 127.0.0.1:<free port>

Both balance per call (HTTP/2 stream), round-robin over the backends, plaintext HTTP/2
on both sides (h2c), loopback only. nginx answers a call whose backend failed before
answering with a gRPC UNAVAILABLE (`error_page` to a trailers-only response, as nginx's
own gRPC gateway guide does): its default HTML 502 page would commit the call, so no
gRPC client could retry it. Each runs in the foreground (`daemon off`, `-db`)
with its own configuration, pid file, logs and temporary directories under a fresh
directory, and is stopped with SIGTERM (SIGKILL after a timeout). `proxy.log()` returns
the access log (nginx: one line per call, `upstream_addr status`), which says which
backend served which call.

The `grpc_proxy` fixture factory starts one and stops it at the end of the test; it
skips (fails under CI) when the binary is missing (tests.support.components).
"""

from __future__ import annotations

import getpass
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Literal

import pytest

from tests.support.components import require_binary
from tests.support.servers import free_port

ProxyKind = Literal["nginx", "haproxy"]
BINARIES: dict[str, str] = {"nginx": "/usr/sbin/nginx", "haproxy": "/usr/sbin/haproxy"}
TIMEOUT_S = 300
"""Idle read/send timeout of a proxied call, far above any test's call."""


def _binary(kind: ProxyKind) -> str:
    found = shutil.which(kind) or BINARIES[kind]
    return found


def nginx_config(root: Path, port: int, backends: Sequence[str]) -> str:
    """nginx.conf: HTTP/2 on 127.0.0.1:`port`, `grpc_pass` round-robin over `backends`."""
    servers = "\n".join(f"        server {b} max_fails=0;" for b in backends)
    temps = "\n".join(
        f"    {name}_temp_path {root / name};"
        for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
    )
    # Running as root, nginx's workers would drop to `nobody`, who cannot write here.
    user = f"user {getpass.getuser()};\n" if os.geteuid() == 0 else ""
    return f"""{user}daemon off;
master_process on;
worker_processes 1;
pid {root / "nginx.pid"};
error_log {root / "error.log"} warn;
events {{ worker_connections 1024; }}
http {{
    log_format calls '$upstream_addr $status $request_uri';
    access_log {root / "access.log"} calls;
{temps}
    upstream scorewire {{
{servers}
        keepalive 16;
    }}
    server {{
        listen 127.0.0.1:{port} http2;
        client_max_body_size 64m;
        grpc_read_timeout {TIMEOUT_S}s;
        grpc_send_timeout {TIMEOUT_S}s;
        location / {{
            grpc_pass grpc://scorewire;
        }}
        # A backend lost before answering: a gRPC UNAVAILABLE (trailers only), which
        # clients retry, instead of nginx's HTML 502 page, which commits the call.
        error_page 502 503 504 = @unavailable;
        location @unavailable {{
            default_type application/grpc;
            add_header grpc-status 14 always;
            add_header grpc-message "backend unavailable" always;
            return 204;
        }}
    }}
}}
"""


def haproxy_config(root: Path, port: int, backends: Sequence[str]) -> str:
    """haproxy.cfg: h2c on 127.0.0.1:`port`, round-robin per stream over `backends`."""
    servers = "\n".join(f"    server r{i} {b} proto h2" for i, b in enumerate(backends))
    return f"""global
    pidfile {root / "haproxy.pid"}
    maxconn 2000
defaults
    mode http
    timeout connect 2s
    timeout client {TIMEOUT_S}s
    timeout server {TIMEOUT_S}s
    # A backend that refuses the connection: try the next one, the call unsent.
    retries 2
    option redispatch 1
    retry-on conn-failure
frontend grpc_in
    bind 127.0.0.1:{port} proto h2
    default_backend scorewire
backend scorewire
    balance roundrobin
{servers}
"""


class GrpcProxy:
    """An nginx or HAProxy child process proxying gRPC from one port to `backends`."""

    def __init__(self, kind: ProxyKind, backends: Sequence[str]) -> None:
        if kind not in BINARIES:
            raise ValueError(f"unknown proxy {kind!r}: nginx or haproxy")
        self.kind: ProxyKind = kind
        self.backends = list(backends)
        self.port = free_port()
        self.root = Path(tempfile.mkdtemp(prefix=f"scorewire-{kind}-"))
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """`127.0.0.1:<port>`: point a client here."""
        return f"127.0.0.1:{self.port}"

    def _command(self) -> list[str]:
        binary = _binary(self.kind)
        if self.kind == "nginx":
            conf = self.root / "nginx.conf"
            conf.write_text(nginx_config(self.root, self.port, self.backends))
            err = self.root / "error.log"
            return [binary, "-p", str(self.root), "-c", str(conf), "-e", str(err)]
        conf = self.root / "haproxy.cfg"
        conf.write_text(haproxy_config(self.root, self.port, self.backends))
        return [binary, "-db", "-f", str(conf)]

    def start(self, timeout_s: float = 10.0) -> None:
        """Start the proxy and wait until its port accepts connections."""
        self._proc = subprocess.Popen(
            self._command(),
            stdout=(self.root / "stdout.log").open("wb"),
            stderr=subprocess.STDOUT,
            cwd=self.root,
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise RuntimeError(f"{self.kind} exited with {self._proc.returncode}: {self.log()}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise RuntimeError(f"{self.kind} did not listen on {self.address} in time")

    def log(self) -> str:
        """The access log (nginx) and whatever the proxy printed."""
        parts = [p.read_text(errors="replace") for p in sorted(self.root.glob("*.log"))]
        return "\n".join(parts)

    def stop(self) -> None:
        """SIGTERM, SIGKILL after 5 s; then remove the directory."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=5)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> GrpcProxy:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def require_proxy(kind: ProxyKind) -> None:
    """Skip (fail under CI) when `kind`'s binary is not installed."""
    require_binary(_binary(kind), kind)


@pytest.fixture
def grpc_proxy() -> Iterator[Callable[[ProxyKind, Sequence[str]], GrpcProxy]]:
    """`grpc_proxy(kind, backends)` starts a proxy; every one is stopped after the test."""
    started: list[GrpcProxy] = []

    def start(kind: ProxyKind, backends: Sequence[str]) -> GrpcProxy:
        require_proxy(kind)
        proxy = GrpcProxy(kind, backends)
        proxy.start()
        started.append(proxy)
        return proxy

    yield start
    for proxy in started:
        proxy.stop()
