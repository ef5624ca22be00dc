"""`scorewire serve` as a real process: the ready line, SIGTERM and --workers."""

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
SCOREWIRE = str(Path(sys.executable).parent / "scorewire")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["SCOREWIRE_METRICS_ENABLED"] = "false"
    env["SCOREWIRE_GRACE_PERIOD_S"] = "10"
    return env


def _start(*args: str) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [SCOREWIRE, "serve", "--imports", "tests.server.custom_checks", *args],
        stdout=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=ROOT,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("scorewire listening on "), line
    return proc, line.rsplit(" ", 1)[1].strip()


def _slow_request(seconds: float) -> pb.ScoreRequest:
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.slow")])
    req.sample.metadata["sleep"] = seconds
    return req


def test_sigterm_lets_in_flight_calls_finish_and_refuses_new_ones() -> None:
    # SIGTERM mid-call: the call completes, new calls fail, the process exits 0.
    proc, addr = _start("--port", "0")
    try:
        with grpc.insecure_channel(addr) as ch:
            stub = scoring_pb2_grpc.ScoringServiceStub(ch)
            fut = stub.Score.future(_slow_request(1.0))
            time.sleep(0.3)
            proc.send_signal(signal.SIGTERM)
            assert fut.result(timeout=10).passed
            with pytest.raises(grpc.RpcError), grpc.insecure_channel(addr) as ch2:
                scoring_pb2_grpc.ScoringServiceStub(ch2).Score(_slow_request(0), timeout=2)
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_workers_share_one_port() -> None:
    # --workers 2: two processes accept connections on the same port.
    port = _free_port()
    proc, addr = _start("--port", str(port), "--workers", "2")
    try:
        pids = set()
        deadline = time.monotonic() + 20
        while len(pids) < 2 and time.monotonic() < deadline:
            # A new channel is a new connection, which the kernel spreads over workers.
            with grpc.insecure_channel(addr, options=[("grpc.use_local_subchannel_pool", 1)]) as ch:
                resp = scoring_pb2_grpc.ScoringServiceStub(ch).Score(
                    pb.ScoreRequest(checks=[pb.CheckSpec(type="test.pid")]), timeout=5
                )
                pids.add(resp.scores[0].reason)
        assert len(pids) == 2, pids
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        finally:
            proc.kill()


def test_a_bad_token_setting_stops_serve_with_a_message_that_never_shows_the_value() -> None:
    # A token pasted where its digest belongs: exit 2, the entry named, the token not shown.
    entry = '{"name": "checkout", "sha256": "my-secret-token", "role": "caller"}'
    env = _env() | {"SCOREWIRE_AUTH_TOKENS": f"[{entry}]"}
    done = subprocess.run(
        [SCOREWIRE, "serve", "--port", "0"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2
    assert "SCOREWIRE_AUTH_TOKENS entry 1" in done.stderr
    assert "my-secret-token" not in done.stderr + done.stdout
