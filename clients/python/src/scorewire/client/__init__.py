"""scorewire client: score LLM outputs through a scorewire server, sync or asyncio.

    from scorewire.client import Client

    with Client("localhost:50051") as client:
        resp = client.score("Paris", compact=["contains:Paris"])

The generated messages live in `scorewire.v1.scoring_pb2` (re-exported here as `pb`)
`scorewire.v1.labels_pb2` (as `labels_pb`), `scorewire.v1.runs_pb2` (as `runs_pb`) and
`scorewire.v1.jobs_pb2` (as `jobs_pb`).
"""

from scorewire.client._labels import output_hash
from scorewire.client._observe import Observer
from scorewire.client._observe_aio import AsyncObserver
from scorewire.client._observe_shared import DROP_REASONS, ObserverStats
from scorewire.client._run_calls import DEFAULT
from scorewire.client.aio import AsyncClient, AsyncSuiteRun
from scorewire.client.errors import FieldViolation, ScorewireError
from scorewire.client.sync import Client, SuiteRun
from scorewire.v1 import jobs_pb2 as jobs_pb
from scorewire.v1 import labels_pb2 as labels_pb
from scorewire.v1 import runs_pb2 as runs_pb
from scorewire.v1 import scoring_pb2 as pb

__all__ = [
    "DEFAULT",
    "DROP_REASONS",
    "AsyncClient",
    "AsyncObserver",
    "AsyncSuiteRun",
    "Client",
    "FieldViolation",
    "Observer",
    "ObserverStats",
    "ScorewireError",
    "SuiteRun",
    "jobs_pb",
    "labels_pb",
    "output_hash",
    "pb",
    "runs_pb",
]
