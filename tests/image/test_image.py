"""The built image, run as users run it: serving, scoring, metrics, labels, shutdown.

Each test starts the image's own command (see conftest.py) on free loopback ports and
talks to it through the generated stubs, as a client outside the container would.
Judge calls go to the OpenAI stand-in on the host (the container shares its network).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf import json_format
from grpc_health.v1 import health_pb2, health_pb2_grpc
from scorewire.labels.label_model import output_hash
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.image.conftest import ROOT, free_port, image_config
from tests.metrics.helpers import scrape_url

# The first test pays for the session's image build, which compiles the native kernel
# into the server's wheel (minutes on a fresh machine, more on a busy one): the default
# 300 s per test would cut it short; the build's own subprocess timeout is 1,200 s.
pytestmark = [pytest.mark.image, pytest.mark.timeout(1260)]

KEY = "sk-test-image-0123456789"
VERDICT = json.dumps({"reasoning": "helpful", "score": 5})


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    fake = FakeOpenAI(default=Reply(content=VERDICT), api_key=KEY)
    with fake.running():
        yield fake


def serving_env(fake: FakeOpenAI, metrics_port: int) -> dict[str, str]:
    """What a deployment sets on top of the image's ENV: loopback, free ports, a judge."""
    return {
        "SCOREWIRE_HOST": "127.0.0.1",
        "SCOREWIRE_PORT": str(free_port()),
        "SCOREWIRE_METRICS_PORT": str(metrics_port),
        "SCOREWIRE_GRACE_PERIOD_S": "10",
        "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
        "SCOREWIRE_OPENAI_BASE_URL": fake.url,
        "SCOREWIRE_OPENAI_API_KEY": KEY,
    }


def score_request(*checks: dict[str, object], text: str = "Paris") -> pb.ScoreRequest:
    return json_format.ParseDict(
        {"sample": {"id": "s1"}, "output": {"text": text}, "checks": list(checks)},
        pb.ScoreRequest(),
    )


CONTAINS = {"name": "capital", "type": "contains", "params": {"needles": ["Paris"]}}
JUDGE = {"name": "helpful", "type": "judge", "params": {"rubric": "Is it helpful?"}}
HUMAN = {"name": "reviewed", "type": "human"}


def test_the_image_serves_health_scores_metrics_and_keeps_labels_in_its_volume(
    run_image, fake_openai: FakeOpenAI
) -> None:
    # One server from the image: SERVING, a Score with a deterministic and a judge check,
    # /metrics counting it, labels put and listed, then read back by a second server
    # started on the same state volume.
    metrics_port = free_port()
    server = run_image(serving_env(fake_openai, metrics_port))
    with grpc.insecure_channel(server.ready_address()) as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="scorewire.v1.ScoringService"), timeout=10
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        scored = scoring_pb2_grpc.ScoringServiceStub(channel).Score(
            score_request(CONTAINS, JUDGE), timeout=30
        )
        assert [(s.name, s.passed, s.HasField("error")) for s in scored.scores] == [
            ("capital", True, False),
            ("helpful", True, False),
        ]
        assert scored.scores[1].cost_usd > 0 and fake_openai.calls == 1
        labels = labels_pb2_grpc.LabelServiceStub(channel)
        label = lpb.Label(
            sample_id="s1", output_hash=output_hash("Paris"), passed=True, labeller="ana"
        )
        labels.PutLabels(lpb.PutLabelsRequest(labels=[label]), timeout=10)
        listed = labels.ListLabels(lpb.ListLabelsRequest(sample_id="s1"), timeout=10)
        assert [lb.passed for lb in listed.labels] == [True]
    scrape = scrape_url(f"http://127.0.0.1:{metrics_port}/metrics")
    assert scrape.value("grpc_server_handled_total", grpc_method="Score", grpc_code="OK") == 1
    # The store is in the volume, written as the image's user; nothing else is.
    assert server.state is not None
    uid = int(image_config(server.image).user.partition(":")[0])
    assert (server.state / "labels.db").stat().st_uid == uid
    server.terminate()
    assert server.wait(timeout=30) == 0

    again = run_image(serving_env(fake_openai, free_port()), state=server.state)
    with grpc.insecure_channel(again.ready_address()) as channel:
        human = scoring_pb2_grpc.ScoringServiceStub(channel).Score(score_request(HUMAN), timeout=30)
        assert human.scores[0].passed and not human.scores[0].HasField("error")


def test_sigterm_lets_an_in_flight_call_finish_and_the_server_exits_0(
    run_image, fake_openai: FakeOpenAI
) -> None:
    # SIGTERM to the image's process while a judge call is in flight: the call completes,
    # new calls are refused, and the process exits 0 within the grace period (10 s).
    fake_openai.script(Reply(content=VERDICT, delay_s=2.0))
    server = run_image(serving_env(fake_openai, free_port()))
    address = server.ready_address()
    with grpc.insecure_channel(address) as channel:
        stub = scoring_pb2_grpc.ScoringServiceStub(channel)
        in_flight = stub.Score.future(score_request(JUDGE), timeout=30)
        deadline = time.monotonic() + 20
        while fake_openai.calls == 0 and time.monotonic() < deadline:
            time.sleep(0.05)  # poll: the judge request has reached the stand-in
        assert fake_openai.calls == 1
        server.terminate()
        assert in_flight.result(timeout=20).scores[0].passed
    assert server.wait(timeout=15) == 0
    with pytest.raises(grpc.RpcError), grpc.insecure_channel(address) as channel:
        scoring_pb2_grpc.ScoringServiceStub(channel).Score(score_request(CONTAINS), timeout=2)


def _server_lines(stderr: str) -> list[str]:
    # buildah reports the command's exit status on stderr after the server's own lines.
    noise = ("subprocess exited with status", "Error: exit status")
    return [line for line in stderr.splitlines() if not line.startswith(noise)]


def test_a_state_dir_on_the_read_only_root_is_one_line_and_exit_2(
    run_image, fake_openai: FakeOpenAI
) -> None:
    # The start-up crash this image used to have: the label store on the read-only root
    # (as in a pod that mounts nothing at the state directory; Docker gives a VOLUME an
    # anonymous volume, and buildah run a directory, so a path outside it stands in).
    env = serving_env(fake_openai, free_port()) | {"SCOREWIRE_STATE_DIR": "/srv/scorewire"}
    server = run_image(env)
    code = server.wait(timeout=60)
    assert server.proc is not None and server.proc.stderr is not None
    lines = _server_lines(server.proc.stderr.read())
    assert code == 2, lines
    assert len(lines) == 1, lines
    assert lines[0].startswith(
        "scorewire serve: cannot open the label store /srv/scorewire/labels.db"
    )
    assert "SCOREWIRE_STATE_DIR" in lines[0] and "Read-only file system" in lines[0]


def _bundle_digest(image: str) -> str:
    name = f"scorewire-ca-{abs(hash(image)) % 10**8}"
    subprocess.run(["buildah", "rm", name], capture_output=True, check=False, timeout=60)
    subprocess.run(
        ["buildah", "from", "--pull-never", "--name", name, image],
        capture_output=True,
        check=True,
        timeout=120,
    )
    try:
        return subprocess.run(
            ["buildah", "run", "--isolation", "chroot", name, "--", "sh", "-c",
             "sha256sum /etc/ssl/certs/ca-certificates.crt 2>/dev/null || echo absent"],
            capture_output=True, text=True, check=True, timeout=120,
        ).stdout.split()[0]  # fmt: skip
    finally:
        subprocess.run(["buildah", "rm", name], capture_output=True, check=False, timeout=60)


def test_the_build_does_not_bake_the_host_ca_bundle_into_the_image(image: str) -> None:
    # The build borrows the host's CA bundle (its proxy's CA) for its RUN steps only: the
    # image's bundle is the base's own, byte for byte.
    base = subprocess.run(
        [str(ROOT / "scripts" / "build_test_image.sh"), "--print-base"],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
    assert _bundle_digest(image) == _bundle_digest(base)
