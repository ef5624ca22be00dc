"""One setting for the database replicas share: `SCOREWIRE_DATABASE_URL` puts both the
label store and the run store in PostgreSQL, each overridable by its own URL."""

from __future__ import annotations

from pathlib import Path

import pytest
from google.protobuf import json_format
from scorewire.labels.label_model import output_hash
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc, runs_pb2_grpc, scoring_pb2_grpc
from scorewire.v1 import runs_pb2 as rpb
from scorewire.v1 import scoring_pb2 as pb

from tests.fakes.openai_server import FakeOpenAI
from tests.support.postgres import pg_cluster, pg_url
from tests.support.shared_replicas import REPLICA_KEY, Replicas, replica_env

__all__ = ["pg_cluster", "pg_url"]


def test_database_url_names_both_stores_and_each_url_overrides_it() -> None:
    shared, own = "postgresql://u@db/shared", "postgresql://u@db/runs"
    both = Settings(database_url=shared)
    assert both.labels_url is not None and both.runs_url is not None
    assert both.labels_url.get_secret_value() == both.runs_url.get_secret_value() == shared
    one = Settings(database_url=shared, runs_url=own, labels_url="")
    assert one.runs_url is not None and one.runs_url.get_secret_value() == own
    assert one.labels_url is not None and one.labels_url.get_secret_value() == shared
    unset = Settings(database_url="")  # `${VAR:-}` in a deploy file: no database
    assert unset.labels_url is None and unset.runs_url is None


def test_a_database_url_that_is_not_postgresql_is_refused_once_naming_it() -> None:
    with pytest.raises(ValueError) as err:
        Settings(database_url="sqlite:///tmp/x.db")
    assert err.value.errors()[0]["loc"] == ("database_url",)  # type: ignore[attr-defined]
    assert len(err.value.errors()) == 1  # type: ignore[attr-defined]


def test_two_replicas_on_one_database_url_share_labels_and_recorded_runs(
    pg_url: str, tmp_path: Path
) -> None:
    # Each replica has its own state directory (so SQLite would split them); the one
    # setting puts a label written through one and a run recorded through the other in
    # the same database.
    with FakeOpenAI(api_key=REPLICA_KEY).running() as judge:
        env = replica_env(judge, "memory://", tmp_path, database_url=pg_url)
        with Replicas(2, env) as replicas:
            first, second = replicas.channel(0), replicas.channel(1)
            label = json_format.ParseDict(
                {
                    "sampleId": "s1",
                    "outputHash": output_hash("Paris"),
                    "passed": True,
                    "labeller": "ana",
                },
                lpb.Label(),
            )
            labels_pb2_grpc.LabelServiceStub(first).PutLabels(
                lpb.PutLabelsRequest(labels=[label]), timeout=30
            )
            listed = labels_pb2_grpc.LabelServiceStub(second).ListLabels(
                lpb.ListLabelsRequest(sample_id="s1"), timeout=30
            )
            assert [(lb.sample_id, lb.labeller) for lb in listed.labels] == [("s1", "ana")]

            request = pb.RunSuiteRequest(
                checks=[pb.CheckSpec(name="paris", type="contains", params={"needles": ["Paris"]})],
                cases=[pb.Case(sample=pb.Sample(id="s1"), output=pb.Output(text="Paris"))],
                record=True,
                run_name="shared",
            )
            events = list(scoring_pb2_grpc.ScoringServiceStub(second).RunSuite(request, timeout=30))
            run_id = events[-1].summary.run_id
            assert run_id
            runs = runs_pb2_grpc.RunServiceStub(first).ListRuns(rpb.ListRunsRequest(), timeout=30)
            assert [(r.run_id, r.name) for r in runs.runs] == [(run_id, "shared")]
    for i in (0, 1):  # and neither replica wrote a SQLite label or run store of its own
        state = tmp_path / f"replica-{i}"
        assert not (state / "labels.db").exists() and not (state / "runs.db").exists()
