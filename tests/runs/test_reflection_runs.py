"""The RunService through reflection, as grpcurl sees it: listed, described with comments,
and callable from the command line (docs/runs.md's example)."""

from __future__ import annotations

import asyncio
import json

import pytest
from scorewire.v1 import scoring_pb2 as pb

from tests.runs.conftest import CHECKS, RunServer, case
from tests.support.servers import ROOT

GRPCURL = ROOT / ".tools" / "bin" / "grpcurl"


async def grpcurl(*args: str) -> str:
    if not GRPCURL.exists():
        pytest.skip("grpcurl is not installed in .tools/bin (scripts/install_test_deps.sh)")
    proc = await asyncio.create_subprocess_exec(
        str(GRPCURL), *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    return out.decode()


@pytest.mark.parametrize("open_store", ["sqlite"], indirect=True)
async def test_grpcurl_lists_describes_and_calls_the_run_service(run_server: RunServer) -> None:
    addr = run_server.address
    assert "scorewire.v1.RunService" in (await grpcurl("-plaintext", addr, "list")).split()
    described = await grpcurl("-plaintext", addr, "describe", "scorewire.v1.RunService")
    assert "RunService lists, reads, compares and deletes recorded runs" in described
    req = pb.RunSuiteRequest(checks=CHECKS, cases=[case("a", "Paris")], record=True)
    req.run_name = "nightly"
    async for _ in run_server.scoring.RunSuite(req):
        pass
    body = json.dumps({"name": "nightly", "page_size": 5})
    listed = json.loads(
        await grpcurl("-plaintext", "-d", body, addr, "scorewire.v1.RunService/ListRuns")
    )
    assert [r["name"] for r in listed["runs"]] == ["nightly"]
    assert listed["runs"][0]["status"] == "RUN_STATUS_COMPLETE"
