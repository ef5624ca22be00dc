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

import urllib.parse
import urllib.request
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
from tests.metrics.test_promql import _query, dashboard_expressions, prometheus_scraping
from tests.support.components import require_binary
from tests.support.postgres import pg_cluster, pg_url
from tests.support.redis import RedisServer, redis_server
from tests.support.wait import wait_until

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

        # Prometheus, with compose's prometheus.yml (its scorewire job's targets replaced
        # by the replicas' metrics addresses, compose's `scorewire-N:9464`), scrapes both;
        # every dashboard query is answered.
        targets = [f"127.0.0.1:{ports['METRICS_PORT']}" for _, ports in replicas]
        config = yaml.safe_load(PROMETHEUS_YML.read_text())
        (job,) = [j for j in config["scrape_configs"] if j["job_name"] == "scorewire"]
        assert len(job["static_configs"][0]["targets"]) == len(targets)
        rule_files = tuple(str(PROMETHEUS_YML.parent / f) for f in config["rule_files"])
        require_binary("prometheus", "prometheus")
        with prometheus_scraping(*targets, job=job, rule_files=rule_files) as (base, _):

            def both_up() -> bool:
                try:
                    up = _query(base, 'up{job="scorewire"} == 1')["data"]["result"]
                except OSError:
                    return False  # Prometheus is not listening yet
                return len(up) == len(targets)

            wait_until(both_up, "Prometheus to scrape both replicas", timeout_s=60.0)
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
