"""Score a batch as an evaluation job: create it, wait for its end, read its aggregations."""

import os

from scorewire.client import Client, ScorewireError, jobs_pb

cases = [
    {"sample": {"id": "q1"}, "output": "Paris is the capital of France."},
    {"sample": {"id": "q2"}, "output": "Lyon, I think."},
    {"sample": {"id": "q3"}, "output": "It is Paris."},
    {"sample": {"id": "q4"}, "output": "Paris."},
]
with Client(os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")) as client:
    # Stored once created: the program could exit now and read the job later by its id.
    job = client.create_job(
        cases, compact=["contains:Paris", "length:1..40"], name="capitals", labels={"team": "geo"}
    )
    print("created:", jobs_pb.JobState.Name(job.state), job.cases_total, "cases")

    # wait_job watches the job (watch_job yields each change of its progress) to its end.
    done = client.wait_job(job.job_id)
    print("ended:", jobs_pb.JobState.Name(done.state), f"{done.cases_done}/{done.cases_total}")
    run = client.get_run(done.run_id)  # the job's recorded run
    print("run:", run.name, run.results, "results")
    for agg in done.aggregations:
        print(f"{agg.name}: average {agg.average:.2f}, median {agg.median:.2f}, p95 {agg.p95:.2f}")

    # A job that has ended cannot be cancelled: refused naming the field.
    try:
        client.cancel_job(job.job_id)
    except ScorewireError as err:
        print("cancel:", err.code.name, [v.field for v in err.field_violations])
