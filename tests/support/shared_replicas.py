"""Several real `scorewire serve` processes sharing one Redis and one stand-in judge,
reached directly (the shared-budget, single-flight and tracing tests; the operator-shaped
set behind proxies, with kill and drain, is `tests.support.replicas`).

    with FakeOpenAI(api_key=REPLICA_KEY).running() as judge, RedisServer() as redis:
        with Replicas(3, replica_env(judge, redis.url, tmp_path)) as replicas:
            stubs = replicas.stubs()          # one ScoringService stub per replica
            replicas.addresses                # ["127.0.0.1:<port>", ...]

Each replica is its own process on its own free port (127.0.0.1), with its own state
directory under `base_dir` (so SQLite files are per replica, as in a real deployment
without PostgreSQL), one scoring worker (the machine is small) and metrics off unless
the environment turns them on. `Replicas(1, env, "--workers", "2", port=free_port())`
starts one server with two worker processes on one port instead.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import TracebackType
from typing import Any

import grpc
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.openai_server import FakeOpenAI
from tests.support.servers import serve_process, stop_process

REPLICA_KEY = "sk-test-replicas-0123456789"
"""The stand-in judge's API key that `replica_env` hands the replicas."""


def replica_env(judge: FakeOpenAI, redis_url: str, base_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of replicas judged by `judge` (an OpenAI stand-in with
    `REPLICA_KEY`) and sharing the Redis at `redis_url`; `extra` adds SCOREWIRE_* names."""
    env = {
        "SCOREWIRE_OPENAI_BASE_URL": judge.url,
        "SCOREWIRE_OPENAI_API_KEY": REPLICA_KEY,
        "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
        "SCOREWIRE_JUDGE_RETRY_BASE_S": "0.01",
        "SCOREWIRE_CACHE_URL": redis_url,
        "SCOREWIRE_METRICS_ENABLED": "false",
        "SCOREWIRE_SCORING_WORKERS": "1",
        "SCOREWIRE_STATE_DIR": str(base_dir),
    }
    env.update({f"SCOREWIRE_{k.upper()}": v for k, v in extra.items()})
    return env


class Replicas:
    """`count` server processes started with `env` (and `args`); stopped on exit."""

    def __init__(
        self,
        count: int,
        env: dict[str, str],
        *args: str,
        port: int = 0,
        stderr: int | None = None,
    ) -> None:
        self.count = count
        self.env = env
        self.args = args
        self.port = port
        self.stderr = stderr
        self.procs: list[subprocess.Popen[str]] = []
        self.addresses: list[str] = []
        self._channels: list[grpc.Channel] = []

    def start(self) -> Replicas:
        """Start every replica, each in its own state directory; wait for all to listen."""
        base = Path(self.env.get("SCOREWIRE_STATE_DIR", "."))
        try:
            for i in range(self.count):
                env = dict(self.env, SCOREWIRE_STATE_DIR=str(base / f"replica-{i}"))
                proc, address = serve_process(env, *self.args, port=self.port, stderr=self.stderr)
                self.procs.append(proc)
                self.addresses.append(address)
        except BaseException:
            self.stop()
            raise
        return self

    def channel(self, i: int) -> grpc.Channel:
        """A new channel (its own connection) to replica `i`, closed with the replicas."""
        # A local subchannel pool: gRPC would otherwise share one connection between
        # channels to the same address, and `--workers` spreads connections, not calls.
        channel = grpc.insecure_channel(
            self.addresses[i], options=[("grpc.use_local_subchannel_pool", 1)]
        )
        self._channels.append(channel)
        return channel

    def stubs(self) -> list[Any]:
        """One ScoringService stub per replica."""
        return [scoring_pb2_grpc.ScoringServiceStub(self.channel(i)) for i in range(self.count)]

    def stop(self) -> None:
        """Close the channels and stop every replica (SIGTERM, then SIGKILL)."""
        for channel in self._channels:
            channel.close()
        self._channels.clear()
        for proc in self.procs:
            stop_process(proc)
        self.procs.clear()

    def __enter__(self) -> Replicas:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
