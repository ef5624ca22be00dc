"""Label tests: a real server with the LabelService, a real PostgreSQL, a real terminal."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import grpc
import psycopg
import pytest
from scorewire.labels.model import Label, LabelStore, output_hash
from scorewire.labels.sqlite import SqliteLabelStore
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc

T0 = datetime(2025, 5, 1, 12, 0, tzinfo=UTC)


def label(
    sample_id: str = "s1",
    text: str = "Paris",
    passed: bool = True,
    labeller: str = "ana",
    *,
    check: str = "default",
    at: int = 0,
    note: str = "",
) -> Label:
    """A label of `text` for `sample_id`, made `at` seconds after T0."""
    return Label(
        sample_id=sample_id,
        output_hash=output_hash(text),
        passed=passed,
        labeller=labeller,
        created_at=T0.replace(second=at % 60, minute=at // 60),
        check=check,
        note=note,
    )


# ---- a real server ---------------------------------------------------------------------------


@dataclass
class LabelServer:
    """A scorewire server with a label store, and stubs of both services."""

    channel: grpc.aio.Channel
    scoring: scoring_pb2_grpc.ScoringServiceStub
    labels: labels_pb2_grpc.LabelServiceStub
    address: str
    stop: Callable[[], Awaitable[None]]


async def start_label_server(
    store: LabelStore, *, credentials: grpc.ChannelCredentials | None = None, **overrides: object
) -> LabelServer:
    """The server of `create_server(settings, labels=store)` on a free port.

    `overrides` are settings (auth tokens, TLS files); with `credentials` the channel
    speaks TLS to `localhost` (the test certificate's name).
    """
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **overrides)
    running, port = await create_server(settings, labels=store)
    if credentials is None:
        channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    else:
        channel = grpc.aio.secure_channel(f"localhost:{port}", credentials)
    return LabelServer(
        channel,
        scoring_pb2_grpc.ScoringServiceStub(channel),
        labels_pb2_grpc.LabelServiceStub(channel),
        f"127.0.0.1:{port}",
        lambda: running.stop(0),
    )


@pytest.fixture
async def sqlite_store(tmp_path) -> AsyncIterator[SqliteLabelStore]:
    store = await SqliteLabelStore.open(str(tmp_path / "labels.db"))
    try:
        yield store
    finally:
        await store.close()


@pytest.fixture
async def label_server(sqlite_store) -> AsyncIterator[LabelServer]:
    srv = await start_label_server(sqlite_store)
    try:
        yield srv
    finally:
        await srv.channel.close()
        await srv.stop()


# ---- a real PostgreSQL ---------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pg_bindir() -> str | None:
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return os.path.dirname(os.path.realpath(found))
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda d: int(d.split("/")[-2] or 0))
    return next((d for d in reversed(dirs) if os.path.exists(f"{d}/initdb")), None)


class PostgresCluster:
    """A throwaway cluster on a free loopback port, run as the `postgres` OS user by root."""

    def __init__(self, bindir: str) -> None:
        self.bindir = bindir
        self.port = free_port()
        self.root = tempfile.mkdtemp(prefix="scorewire-pg-")
        self.data = os.path.join(self.root, "data")
        self.log = os.path.join(self.root, "postgres.log")
        self._as_user: list[str] = []
        if os.geteuid() == 0:
            # PostgreSQL refuses to run as root.
            self._as_user = ["runuser", "-u", "postgres", "--"]
            shutil.chown(self.root, "postgres")
        os.chmod(self.root, 0o700)

    def _run(self, *cmd: str) -> None:
        subprocess.run(
            [*self._as_user, *cmd], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def init(self) -> None:
        self._run(
            f"{self.bindir}/initdb", "-D", self.data, "-U", "scorewire", "--auth=trust",
            "-E", "UTF8", "--no-sync",
        )  # fmt: skip

    def start(self) -> None:
        opts = f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.root} -c fsync=on"
        self._run(f"{self.bindir}/pg_ctl", "-D", self.data, "-o", opts, "-l", self.log, "-w",
                  "start")  # fmt: skip

    def stop(self, mode: str = "fast") -> None:
        """Stop the server; `immediate` is a crash (no checkpoint, WAL replay at start)."""
        self._run(f"{self.bindir}/pg_ctl", "-D", self.data, "-m", mode, "-w", "stop")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://scorewire@127.0.0.1:{self.port}/{db}"

    def create_database(self, name: str) -> str:
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def destroy(self) -> None:
        with contextlib.suppress(subprocess.CalledProcessError):
            self.stop("immediate")
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def pg_cluster() -> Iterator[PostgresCluster]:
    bindir = _pg_bindir()
    as_root_without_user = os.geteuid() == 0 and shutil.which("runuser") is None
    if bindir is None or as_root_without_user:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL binaries (Debian package postgresql) are required in CI")
        pytest.skip("PostgreSQL binaries not installed (apt-get install postgresql)")
    cluster = PostgresCluster(bindir)
    try:
        cluster.init()
        cluster.start()
        yield cluster
    finally:
        cluster.destroy()


_db_counter = iter(range(10_000))


@pytest.fixture
def pg_url(pg_cluster: PostgresCluster) -> str:
    """A fresh database on the module's cluster (which is running)."""
    return pg_cluster.create_database(f"labels_{os.getpid()}_{next(_db_counter)}_{time.time_ns()}")
