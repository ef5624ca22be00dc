"""Compact checks, a suite run, an error that names its field, and human labels."""

import os

from scorewire.client import Client, ScorewireError, output_hash

with Client(os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")) as client:
    # Compact checks ("type:argument") beside a full one; regex is Python re syntax.
    response = client.score(
        "Paris",
        sample={"id": "q1"},
        compact=["contains:Paris", "length:1..500"],
        checks=[{"type": "regex", "params": {"pattern": r"\bparis\b", "flags": ["IGNORECASE"]}}],
    )
    print("score:", response.passed, [s.name for s in response.scores])

    # A suite run yields each case's result once, as it finishes; then the summary.
    cases = [{"sample": {"id": "a"}, "output": "Paris"}, {"sample": {"id": "b"}, "output": "Lyon"}]
    run = client.run_suite(cases, compact=["contains:Paris"])
    for result in sorted(run, key=lambda r: r.index):
        print("case", result.index, result.passed)
    print("pass rate:", run.summary.pass_rate, "gate passed:", run.summary.gate_passed)

    # Bad input is refused naming the field; err.code is a grpc.StatusCode.
    try:
        client.score("x", checks=[{"type": "output_length", "params": {"maximun": 5}}])
    except ScorewireError as err:
        print(err.code.name, [v.field for v in err.field_violations])

    # Human labels, which the `human` check reads: stored, then listed back.
    client.put_labels([{"sample_id": "q1", "output": "Paris", "passed": True, "labeller": "ann"}])
    page = client.list_labels(sample_id="q1", output_hash=output_hash("Paris"), labeller="ann")
    print("labels:", [(label.labeller, label.passed) for label in page.labels])
