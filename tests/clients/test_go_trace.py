"""One Score from the Go client is one connected trace with the server's spans.

The Go client's own test `TestScoreCarriesTheCallersTrace` (clients/go/trace_test.go)
makes the Score inside a caller's span and writes its trace id and its client span's id;
the server, started here with OTEL_EXPORTER_OTLP_ENDPOINT, exports its spans to a real
OTLP receiver. The call goes through a real nginx (`grpc_pass`, as an operator runs
replicas), which passes the `traceparent` header on: the server's RPC span must still be
the Go client span's child.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.fakes.openai_server import FakeOpenAI
from tests.support.components import require_binary
from tests.support.otlp import OtlpReceiver
from tests.support.proxy import GrpcProxy, require_proxy
from tests.support.shared_replicas import REPLICA_KEY, Replicas, replica_env

ROOT = Path(__file__).resolve().parents[2]
SERVER_KIND = 2  # OTLP's SPAN_KIND_SERVER


def test_a_go_score_through_nginx_is_one_trace_with_the_servers_spans(tmp_path: Path) -> None:
    go = require_binary("go", "golang-go")
    require_proxy("nginx")
    ids_file = tmp_path / "ids.txt"
    with (
        FakeOpenAI(api_key=REPLICA_KEY).running() as judge,
        OtlpReceiver() as otlp,
    ):
        env = replica_env(judge, "memory://", tmp_path)
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = otlp.endpoint
        env["OTEL_BSP_SCHEDULE_DELAY"] = "100"
        with Replicas(1, env) as replicas, GrpcProxy("nginx", replicas.addresses) as proxy:
            done = subprocess.run(
                [go, "test", "-count=1", "-run", "^TestScoreCarriesTheCallersTrace$", "."],
                cwd=ROOT / "clients" / "go",
                env=dict(
                    os.environ,
                    SCOREWIRE_ADDR=proxy.address,
                    SCOREWIRE_TRACE_IDS=str(ids_file),
                ),
                capture_output=True,
                text=True,
                timeout=540,
            )
            assert done.returncode == 0, done.stdout + done.stderr
            trace_id, client_span = ids_file.read_text().split()
            spans = otlp.wait_for(
                lambda got: any(s.trace_id == trace_id and s.kind == SERVER_KIND for s in got),
                "the server's span of the Go call",
            )
    mine = [s for s in spans if s.trace_id == trace_id]
    rpc = next(s for s in mine if s.kind == SERVER_KIND)
    assert rpc.name == "/scorewire.v1.ScoringService/Score"
    assert rpc.parent_span_id == client_span  # the Go client's span is its parent
    ids = {s.span_id for s in mine} | {client_span}
    # Every server span hangs off the RPC span, so off the Go client's: one tree.
    assert all(s.parent_span_id in ids for s in mine)
