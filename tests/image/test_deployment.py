"""The Compose deployment as written: two replicas of the image with compose's own
environment, sharing one Redis and one PostgreSQL, scraped by a real Prometheus that
answers the dashboard's queries.

What differs from `docker compose up`, and why: no Docker engine runs here (buildah runs
the image, on the host's network), so compose's service names are mapped to the Redis and
PostgreSQL the tests start on loopback (the URLs keep compose's scheme, database and
options), and each replica gets loopback ports of its own where compose publishes
50051/50052 and the viewer's 8080/8081 (tests listen on 127.0.0.1 only). Every other
variable is compose's, interpolated with an empty shell environment.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import grpc
import pytest
import yaml
from google.protobuf import json_format
from scorewire.labels.label_model import output_hash
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.image.conftest import ROOT, free_port
from tests.metrics.test_deploy import REPLICAS, compose, replica_env
from tests.metrics.test_promql import dashboard_expressions
from tests.support.components import require_binary
from tests.support.postgres import pg_cluster, pg_url
from tests.support.redis import RedisServer, redis_server

__all__ = ["pg_cluster", "pg_url", "redis_server"]

# The first image test of a session pays for the build (see test_image.py).
pytestmark = [pytest.mark.image, pytest.mark.timeout(1260)]

PROMETHEUS_YML = ROOT / "deploy/prometheus/prometheus.yml"


def _mapped(url: str, to: str, *, database: bool) -> str:
    """Compose's `scheme://user:pw@service:port/db` pointed at the test's server `to`: its
    address (and, for PostgreSQL, credentials and database), compose's scheme and the
    rest kept."""
    ours, theirs = urlsplit(url), urlsplit(to)
    assert ours.hostname in compose()["services"], url  # a service of the compose file
    return ours._replace(netloc=theirs.netloc, path=theirs.path if database else ours.path).geturl()


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as resp:
        return json.loads(resp.read())


def _query(base: str, expr: str) -> Any:
    return _get(f"{base}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))


@contextmanager
def prometheus(targets: list[str]) -> Iterator[str]:
    """Prometheus with deploy/prometheus/prometheus.yml, its scorewire targets replaced by
    the replicas' metrics addresses (compose's `scorewire-N:9464`), scraping every second."""
    binary = require_binary("prometheus", "prometheus")
    config = yaml.safe_load(PROMETHEUS_YML.read_text())
    config["global"] = {"scrape_interval": "1s", "evaluation_interval": "1s"}
    config["rule_files"] = [str(PROMETHEUS_YML.parent / f) for f in config["rule_files"]]
    (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "scorewire"]
    assert len(job["static_configs"][0]["targets"]) == len(targets)
    job["static_configs"] = [{"targets": targets}]
    config["scrape_configs"] = [job]
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp, "prometheus.yml")
        path.write_text(yaml.safe_dump(config))
        proc = subprocess.Popen(
            [
                binary,
                f"--config.file={path}",
                f"--storage.tsdb.path={tmp}/data",
                f"--web.listen-address=127.0.0.1:{port}",
                "--log.level=warn",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


def _wait(fn: Any, what: str, timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            found = fn()
        except OSError:
            found = None
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.2)


def test_the_compose_deployment_runs_as_written(
    run_image: Any, redis_server: RedisServer, pg_url: str
) -> None:
    services = compose()["services"]
    replicas = []
    for name in REPLICAS:
        env = replica_env(name)
        cache, database = env["SCOREWIRE_CACHE_URL"], env["SCOREWIRE_DATABASE_URL"]
        env["SCOREWIRE_CACHE_URL"] = _mapped(cache, redis_server.url, database=False)
        env["SCOREWIRE_DATABASE_URL"] = _mapped(database, pg_url, database=True)
        ports = {k: str(free_port()) for k in ("PORT", "METRICS_PORT", "VIEWER_PORT")}
        env |= {f"SCOREWIRE_{k}": v for k, v in ports.items()}
        env |= {"SCOREWIRE_HOST": "127.0.0.1", "SCOREWIRE_VIEWER_HOST": "127.0.0.1"}
        assert services[name]["read_only"] is True  # and the image runs on a read-only root
        replicas.append((run_image(env), ports))
    addresses = [container.ready_address() for container, _ in replicas]
    channels = [grpc.insecure_channel(a) for a in addresses]
    try:
        one, two = channels
        # A Score through either replica.
        contains = pb.CheckSpec(type="contains", params={"needles": ["Paris"]})
        score = scoring_pb2_grpc.ScoringServiceStub(one).Score(
            pb.ScoreRequest(output=pb.Output(text="Paris"), checks=[contains]), timeout=30
        )
        assert score.passed
        # A run recorded through the first replica is read back through the second.
        request = pb.RunSuiteRequest(
            checks=[contains],
            cases=[pb.Case(sample=pb.Sample(id="s1"), output=pb.Output(text="Paris"))],
            record=True,
            run_name="compose",
        )
        events = list(scoring_pb2_grpc.ScoringServiceStub(one).RunSuite(request, timeout=60))
        run_id = events[-1].summary.run_id
        runs = runs_pb2_grpc.RunServiceStub(two).ListRuns(rpb.ListRunsRequest(), timeout=30)
        assert [(r.run_id, r.name) for r in runs.runs] == [(run_id, "compose")]
        # A label written through the second is read through the first.
        label = json_format.ParseDict(
            {"sampleId": "s1", "outputHash": output_hash("Paris"), "passed": True, "labeller": "a"},
            lpb.Label(),
        )
        labels_pb2_grpc.LabelServiceStub(two).PutLabels(
            lpb.PutLabelsRequest(labels=[label]), timeout=30
        )
        listed = labels_pb2_grpc.LabelServiceStub(one).ListLabels(
            lpb.ListLabelsRequest(sample_id="s1"), timeout=30
        )
        assert [lb.labeller for lb in listed.labels] == ["a"]
        # The second replica's viewer lists the run the first recorded.
        viewer = f"http://127.0.0.1:{replicas[1][1]['VIEWER_PORT']}/"
        with urllib.request.urlopen(viewer, timeout=10) as page:
            assert run_id in page.read().decode()

        # Prometheus scrapes both; every dashboard query is answered.
        targets = [f"127.0.0.1:{ports['METRICS_PORT']}" for _, ports in replicas]
        with prometheus(targets) as base:

            def both_up() -> bool:
                up = _query(base, 'up{job="scorewire"} == 1')["data"]["result"]
                return len(up) == len(targets)

            _wait(both_up, "Prometheus to scrape both replicas")
            for expr in dashboard_expressions():
                concrete = (
                    expr.replace("$__rate_interval", "1m")
                    .replace("$job", "scorewire")
                    .replace("$instance", ".*")
                )
                body = _query(base, concrete)
                assert body["status"] == "success", (expr, body)
            versions = _query(base, 'count(scorewire_build_info{job="scorewire"})')
            assert float(versions["data"]["result"][0]["value"][1]) == len(targets)
            handled = _query(
                base, 'sum(grpc_server_handled_total{job="scorewire", grpc_method="Score"})'
            )
            assert float(handled["data"]["result"][0]["value"][1]) >= 1
    finally:
        for channel in channels:
            channel.close()
