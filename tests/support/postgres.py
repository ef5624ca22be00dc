"""A real PostgreSQL for the stores' tests: a throwaway cluster per test module.

Tests that need one import the fixtures into their conftest:
`from tests.support.postgres import pg_cluster, pg_url`; each test gets a fresh database
(`pg_url`) on its module's cluster (`pg_cluster`).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator

import psycopg
import pytest

from tests.support.components import require_component
from tests.support.servers import free_port


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

    def pids(self) -> list[int]:
        """The postmaster's pid, then its children's (backends and background workers)."""
        with open(os.path.join(self.data, "postmaster.pid")) as f:
            postmaster = int(f.readline())
        with open(f"/proc/{postmaster}/task/{postmaster}/children") as f:
            return [postmaster, *map(int, f.read().split())]

    @contextlib.contextmanager
    def frozen(self) -> Iterator[None]:
        """Every process of the server stopped (SIGSTOP) inside the block, resumed after
        it whatever happens: connections stay open and the kernel still accepts new ones,
        but nothing answers (a hung server, not a stopped one)."""
        stopped: list[int] = []
        try:
            for pid in self.pids():  # the postmaster first: it starts no new backend
                os.kill(pid, signal.SIGSTOP)
                stopped.append(pid)
            yield
        finally:
            for pid in reversed(stopped):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGCONT)

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
    if bindir is None:
        require_component("PostgreSQL", "initdb and pg_ctl not found (apt-get install postgresql)")
    if as_root_without_user:
        require_component("PostgreSQL", "running as root without runuser to drop to a user")
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
    return pg_cluster.create_database(f"db_{os.getpid()}_{next(_db_counter)}_{time.time_ns()}")
