"""Job runners are shared between tenants: one tenant's long job does not keep another
tenant's job waiting for its end, and a job's scoring takes its tenant's share of the
scoring workers. A real server with one runner, called through the generated stubs."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from scorewire.v1 import jobs_pb2 as jpb
from scorewire.v1 import scoring_pb2 as pb

from tests.jobs.servers import job_server, requests, sample_ids, texts, watch_to_end
from tests.support.wait import wait_until_async


def _tokens(*names: str) -> str:
    return json.dumps(
        [
            {"name": n, "sha256": hashlib.sha256(f"token-{n}".encode()).hexdigest(),
             "role": "caller"}
            for n in names
        ]
    )  # fmt: skip


def _config() -> jpb.JobConfig:
    spec = pb.CheckSpec(name="paris", type="contains")
    spec.params["expected"] = "Paris"
    return jpb.JobConfig(checks=[spec])


async def test_another_tenants_job_runs_before_a_long_job_ends(tmp_path: Path) -> None:
    # One runner. a's 2,000-case job (500 chunks) is running when b creates an 8-case job:
    # b's ends while a's is still unfinished (before, b waited for a's last chunk), and a's
    # run still holds every case exactly once after turns given back mid-job.
    a = [("authorization", "Bearer token-a")]
    b = [("authorization", "Bearer token-b")]
    async with job_server(
        tmp_path, auth_tokens=_tokens("a", "b"), jobs_runners=1, jobs_slice_s=0.05
    ) as srv:
        long = (await srv.jobs.CreateJob(requests(_config(), texts(["Paris"] * 2000)),
                                         metadata=a)).job  # fmt: skip

        async def started() -> bool:
            got = await srv.jobs.GetJob(jpb.GetJobRequest(job_id=long.job_id), metadata=a)
            return got.job.cases_done > 0

        await wait_until_async(started, "a's job started")
        short = (await srv.jobs.CreateJob(requests(_config(), texts(["Lyon"] * 8)),
                                          metadata=b)).job  # fmt: skip
        ended = (await watch_to_end(srv.jobs, short.job_id, b))[-1]
        assert ended.state == jpb.JOB_STATE_SUCCEEDED and ended.cases_done == 8
        meanwhile = await srv.jobs.GetJob(jpb.GetJobRequest(job_id=long.job_id), metadata=a)
        assert meanwhile.job.state in (jpb.JOB_STATE_RUNNING, jpb.JOB_STATE_QUEUED)
        assert 0 < meanwhile.job.cases_done < 2000
        end = (await watch_to_end(srv.jobs, long.job_id, a))[-1]
        assert end.state == jpb.JOB_STATE_SUCCEEDED and end.summary.cases_passed == 2000
        ids = await sample_ids(srv.runs, end.run_id, a)
        assert sorted(ids) == sorted(f"s{i}" for i in range(2000))
        # each job's chunks were scored in its tenant's share of the workers
        by_tenant = srv.running.service.executor.pool.by_tenant
        assert by_tenant["tenant:b"] >= 2 and by_tenant["tenant:a"] >= 500
