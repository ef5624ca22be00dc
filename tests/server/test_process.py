"""`scorewire serve` as a real process: the ready line, SIGTERM and --workers."""

import os
import signal
import subprocess
import time
from pathlib import Path

import grpc
import pytest
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.server.custom_checks import marks
from tests.support.servers import ROOT, SCOREWIRE, free_port, serve_process
from tests.support.wait import wait_until


def _start(*args: str, port: int = 0) -> tuple[subprocess.Popen[str], str]:
    env = {"SCOREWIRE_METRICS_ENABLED": "false", "SCOREWIRE_GRACE_PERIOD_S": "10"}
    return serve_process(env, "--imports", "tests.server.custom_checks", *args, port=port)


def _slow_request(seconds: float, mark: Path | None = None) -> pb.ScoreRequest:
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="test.slow")])
    req.sample.metadata["sleep"] = seconds
    if mark is not None:
        req.sample.metadata["mark"] = str(mark)
    return req


def test_sigterm_lets_in_flight_calls_finish_and_refuses_new_ones(tmp_path: Path) -> None:
    # SIGTERM mid-call: the call completes, new calls fail, the process exits 0.
    proc, addr = _start()
    mark = tmp_path / "started"
    try:
        with grpc.insecure_channel(addr) as ch:
            stub = scoring_pb2_grpc.ScoringServiceStub(ch)
            fut = stub.Score.future(_slow_request(1.0, mark))
            wait_until(lambda: marks(mark), "the server to start the slow check")
            proc.send_signal(signal.SIGTERM)
            assert fut.result(timeout=10).passed
            with pytest.raises(grpc.RpcError), grpc.insecure_channel(addr) as ch2:
                scoring_pb2_grpc.ScoringServiceStub(ch2).Score(_slow_request(0), timeout=2)
        assert proc.wait(timeout=15) == 0
    finally:
        proc.kill()


def test_workers_share_one_port() -> None:
    # --workers 2: two processes accept connections on the same port.
    proc, addr = _start("--workers", "2", port=free_port())
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
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SCOREWIRE_METRICS_ENABLED": "false",
        "SCOREWIRE_AUTH_TOKENS": f"[{entry}]",
    }
    done = subprocess.run(
        [SCOREWIRE, "serve", "--port", "0"], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 2
    assert "SCOREWIRE_AUTH_TOKENS entry 1" in done.stderr
    assert "my-secret-token" not in done.stderr + done.stdout


def test_judge_calls_do_not_log_a_line_each_at_the_default_level() -> None:
    # The HTTP clients under the SDKs log every request at INFO; the server, at its
    # default INFO, keeps them to warnings (its own INFO lines still show).
    verdict = '{"reasoning": "polite", "score": 5}'
    with FakeOpenAI(api_key="sk-log", default=Reply(content=verdict)).running() as judge:
        env = {
            "SCOREWIRE_OPENAI_API_KEY": "sk-log",
            "SCOREWIRE_OPENAI_BASE_URL": judge.url,
            "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
            "SCOREWIRE_LOG_LEVEL": "INFO",
        }
        proc, addr = serve_process(env, stderr=subprocess.PIPE)
        try:
            with grpc.insecure_channel(addr) as ch:
                stub = scoring_pb2_grpc.ScoringServiceStub(ch)
                for i in range(3):
                    req = pb.ScoreRequest(checks=[pb.CheckSpec(type="judge")])
                    req.checks[0].params["rubric"] = "Is it polite?"
                    req.output.text = f"Hello number {i}"
                    resp = stub.Score(req, timeout=30)
                    assert resp.scores[0].passed, resp.scores[0]
            assert judge.calls == 3
        finally:
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
    assert "serving on" in err  # INFO is on
    assert "HTTP Request" not in err and "chat/completions" not in err, err


def _descendants(pid: int) -> list[int]:
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for task in Path(f"/proc/{p}/task").iterdir():  # any thread may have started one
            kids = [int(k) for k in (task / "children").read_text().split()]
            out.extend(kids)
            todo.extend(kids)
    return out


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.parametrize("operator_value", [None, "4194304"])
def test_serve_fixes_the_mmap_threshold_for_itself_and_every_child(
    operator_value: str | None,
) -> None:
    # Freed 10 MB outputs must go back to the OS (server/memory.py): the serving process
    # sets glibc's threshold, and its scoring workers start with it; an operator's own
    # value stays.
    env = {"SCOREWIRE_SCORING_WORKERS": "2"}
    if operator_value is not None:
        env["MALLOC_MMAP_THRESHOLD_"] = operator_value
    proc, _ = serve_process(env)
    try:
        children = _descendants(proc.pid)  # the workers and their forkserver
        assert len(children) >= 2, children
        want = operator_value or "1048576"
        for pid in [proc.pid, *children]:
            if pid == proc.pid and operator_value is None:
                continue  # set after it started: read by its children, mallopt for itself
            assert _environ(pid).get("MALLOC_MMAP_THRESHOLD_") == want, pid
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
