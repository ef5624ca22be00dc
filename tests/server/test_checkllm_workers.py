"""checkllm runs of recorded outputs are scored in the scoring workers (the executor's
rule), and answer as the serving process's own path does.

A real server on port 0, called through the generated stubs, against the serving
process's path called directly (a `CheckllmRuns` whose executor has no workers): the
same results (byte for byte, latencies aside), summary and matrix, for a suite that
mixes what can differ between them. Then where the run goes (the pool's job count), a
check stopped past its time limit in a chunk scored run by run, and the request limits.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import CollectorRegistry
from scorewire.core.context import CheckContext
from scorewire.metrics.runs import RunMetrics
from scorewire.scoring.checkllm_runs import CheckllmRuns
from scorewire.scoring.chunks import BATCH_MAX_RESULTS
from scorewire.scoring.compiler import compile_plan
from scorewire.scoring.executor import Executor
from scorewire.scoring.plan_source import PlanSource
from scorewire.server import intake
from scorewire.server.app import create_server
from scorewire.settings import Settings
from scorewire.v1 import scoring_pb2 as pb
from scorewire.v1 import scoring_pb2_grpc as pb_grpc

from tests.server import spin_checks  # noqa: F401 - test.spin_on compiles in this process too
from tests.server.conftest import SLOW_MOMENT_TIMEOUTS, Server, serving
from tests.server.test_checkllm_over_grpc import violations

PROVIDERS = ("openai:gpt-4o-mini", "anthropic:claude-3-5-haiku", "echo")
SPIN = ["tests.server.spin_checks"]

KINDS = [
    # kernel twins (contains, regex) with a Python check beside them (max_tokens)
    "vars: {q: a}\n    assert: [{type: contains, value: Paris}, {type: max_tokens, value: 50}]",
    # two checks of one name in a test, and a name other tests have too
    "vars: {q: b}\n    assert: [{type: contains, value: Paris}, {type: contains, value: Rome},"
    " {type: regex, value: '^[A-Z]'}]",
    # the kernel reads the sample's expected value: a string, then an object
    "vars: {q: c, expected: Paris}\n    assert: [{type: contains}]",
    "vars: {q: d, expected: {must_include: [Rome]}}\n    assert: [{type: contains}]",
    # an expected value JSON cannot carry (an integer key): the engine scores the test,
    # and the check errors (the object has no must_include)
    "vars: {q: e, expected: {1: Rome}}\n    assert: [{type: contains}]",
    # checks without a twin (the engine), one of which errors (no reference)
    "vars: {q: f}\n    assert: [{type: bleu}, {type: max_tokens, value: 3}]",
    # a Python check erroring beside a twin, in the kernel
    "vars: {q: g}\n    assert: [{type: contains, value: Paris}, {type: bleu}]",
]


def mixed_suite(tests: int) -> str:
    """Three prompts × three providers × `tests` tests of every kind above; some tests
    record their outputs in the document, for every provider or for one."""
    lines = ["prompts: ['A {{q}}', 'B {{q}}', 'C {{q}}']"]
    lines.append("providers: [" + ", ".join(f'"{p}"' for p in PROVIDERS) + "]")
    lines.append("tests:")
    for i in range(tests):
        lines.append(f"  - description: test {i}\n    {KINDS[i % len(KINDS)]}")
        if i % 9 == 4:
            lines.append("    output: Paris and Rome")
        elif i % 9 == 7:
            lines.append('    outputs: {echo: [Paris, Rome, "Paris, Rome"]}')
    return "\n".join(lines) + "\n"


def recorded_cases(tests: int, seed: int = 7) -> list[pb.Case]:
    """A case for every combination the document does not record, in a shuffled order
    (a chunk then holds short runs of each test), some outputs with a value or metadata."""
    texts = ["Paris", "Rome", "Paris and Rome", "nothing", "rome", "Paris, Rome, Paris!"]
    cases = []
    for t in range(tests):
        if t % 9 == 4:
            continue
        for p in range(3):
            for provider in PROVIDERS:
                if t % 9 == 7 and provider == "echo":
                    continue
                text = texts[(t * 7 + p * 3 + len(provider)) % len(texts)]
                case = pb.Case(test=str(t), prompt=str(p), provider=provider)
                case.output.text = text
                if (t + p) % 11 == 0:
                    case.output.metadata["source"] = "replay"
                if (t + p) % 13 == 0:
                    case.output.value_json = '{"city": "Paris"}'
                cases.append(case)
    random.Random(seed).shuffle(cases)
    return cases


def latency_free(results: list[pb.CaseResult]) -> list[bytes]:
    """The results in index order, serialized, with every latency zeroed (the one field
    two runs of the same checks never share)."""
    out = []
    for r in sorted(results, key=lambda r: r.index):
        copy = pb.CaseResult()
        copy.CopyFrom(r)
        for s in copy.scores:
            s.latency_ms = 0.0
        out.append(copy.SerializeToString(deterministic=True))
    return out


async def over_grpc(
    srv: Server, doc: str, cases: list[pb.Case], deadline_s: float = 60.0
) -> tuple[list[pb.CaseResult], pb.RunSummary]:
    results, summary = [], None
    request = pb.RunSuiteRequest(suite_yaml=doc, cases=cases)
    async for m in srv.stub.RunSuite(request, timeout=deadline_s):
        results.extend(m.results.results)
        if m.HasField("summary"):
            summary = m.summary
    assert summary is not None
    return results, summary


async def in_the_serving_process(
    doc: str, cases: list[pb.Case]
) -> tuple[list[pb.CaseResult], pb.RunSummary]:
    """The run by the serving process's own path: a `CheckllmRuns` without workers."""
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, **SLOW_MOMENT_TIMEOUTS)
    source = PlanSource(suite_yaml=doc)
    compiled = compile_plan(source, settings)
    assert compiled.checkllm is not None
    executor = Executor(settings, workers=False)
    runs = CheckllmRuns(settings, None, None, executor)
    assert not runs.in_workers(compiled.checkllm, compiled.info, cases)
    results, summary = [], None
    try:
        async for m in runs.run_suite(
            compiled.checkllm, pb.RunSuiteRequest(suite_yaml=doc),
            [c.SerializeToString() for c in cases], intake.parse_case, CheckContext(),
            (b"", source, compiled.info),
        ):  # fmt: skip
            message = m if isinstance(m, pb.RunSuiteResponse) else pb.RunSuiteResponse.FromString(m)
            results.extend(message.results.results)
            if message.HasField("summary"):
                summary = message.summary
    finally:
        await runs.aclose()
        await executor.close()
    assert summary is not None
    return results, summary


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    async with serving(scoring_workers=2) as srv:
        yield srv


async def test_the_workers_answer_a_run_as_the_serving_process_does(server: Server) -> None:
    # 40 tests × 3 prompts × 3 providers: 300 cases sent (two chunks, each with many
    # short runs of a test), 60 combinations recorded in the document (a third chunk)
    doc, cases = mixed_suite(40), recorded_cases(40)
    assert len(cases) > BATCH_MAX_RESULTS
    here, here_summary = await in_the_serving_process(doc, cases)
    there, there_summary = await over_grpc(server, doc, cases)
    assert latency_free(there) == latency_free(here)
    assert there_summary == here_summary
    # what the comparison covered
    assert sorted(r.index for r in there) == list(range(360))
    codes = {s.error.code for r in there for s in r.scores if s.HasField("error")}
    assert codes == {"MISSING_REFERENCE"}
    assert 0 < there_summary.cases_passed < there_summary.cases and there_summary.errored > 0
    assert [c.name for c in there_summary.checks] == ["contains", "max_tokens", "regex", "bleu"]
    assert [(c.prompt, c.provider) for c in there_summary.matrix] == [
        (p, provider) for p in range(3) for provider in PROVIDERS
    ]
    assert sum(c.cases for c in there_summary.matrix) == 360
    assert all(not r.generated and r.combination.provider for r in there)


async def test_a_run_of_recorded_outputs_goes_to_the_workers(server: Server) -> None:
    doc, cases = mixed_suite(40), recorded_cases(40)
    pool = server.running.service.executor.pool
    assert pool is not None
    await over_grpc(server, doc, cases)  # the plan is compiled: what follows is scoring
    before = pool.submitted
    await over_grpc(server, doc, cases)
    assert pool.submitted - before == 3  # 256 cases, 44 cases, the document's 60


async def test_a_server_side_custom_check_keeps_the_run_in_the_serving_process(
    server: Server,
) -> None:
    # test.echo_len is registered in the serving process only: a worker has an async
    # stand-in for it, so the run cannot go to the workers, and is scored here
    doc = "tests:\n" + "".join(
        f"  - {{output: {'x' * n}, assert: [{{type: test.echo_len}}]}}\n" for n in (2, 5, 20)
    )
    pool = server.running.service.executor.pool
    assert pool is not None
    await over_grpc(server, doc, [])
    before = pool.submitted
    results, summary = await over_grpc(server, doc, [])
    assert pool.submitted == before
    assert [r.scores[0].value for r in sorted(results, key=lambda r: r.index)] == [0.2, 0.5, 1.0]
    assert summary.cases == 3


def spinning_suite() -> tuple[str, list[pb.Case]]:
    """Six tests of two kinds (a twin beside `test.spin_on`, which the kernel scores;
    `test.spin_on` alone, which the engine scores), two providers, cases test by test:
    one spinning case in a run of each kind, neither run first in its chunk."""
    kinds = [
        "assert: [{type: regex, value: '.'}, {type: test.spin_on}]",
        "assert: [{type: test.spin_on}]",
    ]
    doc = "prompts: ['{{q}}']\nproviders: [echo, 'openai:gpt-4o-mini']\ntests:\n" + "".join(
        f"  - {{vars: {{q: q{t}}}, {kinds[t % 2]}}}\n" for t in range(6)
    )
    cases = [
        pb.Case(test=str(t), provider=p, output=pb.Output(text="P"))
        for t in range(6)
        for p in ("echo", "openai:gpt-4o-mini")
    ]
    cases[5].output.text = "spin"  # test 2 (the kernel's), its second case
    cases[6].output.text = "spin"  # test 3 (the engine's), its first case
    return doc, cases


async def test_a_check_stopped_past_its_limit_is_blamed_on_its_own_case() -> None:
    doc, cases = spinning_suite()
    async with serving(scoring_workers=2, imports=SPIN, check_timeout_s=0.5) as srv:
        results, summary = await over_grpc(srv, doc, cases)
        pool = srv.running.service.executor.pool
        assert pool is not None and pool.replaced >= 2
    by_index = {r.index: r for r in results}
    assert sorted(by_index) == list(range(12))
    stopped = {
        i: [s.error.code for s in r.scores if s.HasField("error")] for i, r in by_index.items()
    }
    assert stopped == {i: ["TIMEOUT"] if i in (5, 6) else [] for i in range(12)}
    assert by_index[5].scores[0].passed  # the twin beside the stopped check kept its score
    assert summary.errored == 2 and summary.cases_passed == 10


async def test_the_deadline_ends_a_run_in_the_workers() -> None:
    doc, cases = spinning_suite()
    async with serving(scoring_workers=2, imports=SPIN) as srv:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await over_grpc(srv, doc, cases, deadline_s=1.0)
        assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        pool = srv.running.service.executor.pool
        assert pool is not None
        # the worker stuck on the spinning case was stopped, not left running
        for _ in range(500):
            if not pool.busy_pids():
                break
            await asyncio.sleep(0.01)
        assert not pool.busy_pids()


async def test_an_output_over_the_limits_is_refused_before_any_chunk_is_scored() -> None:
    doc, cases = mixed_suite(40), recorded_cases(40)
    over = [i for i, c in enumerate(cases) if c.test in ("0", "1")][:2]
    for i in over:
        cases[i].output.text = "x" * 5000
    first = min(over, key=lambda i: (int(cases[i].test), int(cases[i].prompt),
                                     PROVIDERS.index(cases[i].provider)))  # fmt: skip
    async with serving(scoring_workers=2, max_output_bytes=1024) as srv:
        pool = srv.running.service.executor.pool
        assert pool is not None
        await over_grpc(srv, doc, recorded_cases(40))  # compiled
        before = pool.submitted
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await over_grpc(srv, doc, cases)
        assert err.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        # the first in run order (test, prompt, provider), as the serving process reports it
        assert violations(err.value)[0][0] == f"cases[{first}].output.text"
        # the chunks wholly before the first case over the limits may have gone, no other
        assert pool.submitted - before <= min(over) // BATCH_MAX_RESULTS


async def test_output_json_that_does_not_parse_is_invalid_argument(server: Server) -> None:
    doc, cases = mixed_suite(40), recorded_cases(40)
    cases[3].output.ClearField("metadata")
    cases[3].output.value_json = "{not json"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await over_grpc(server, doc, cases)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    (field, description), *_ = violations(err.value)
    assert field == "cases[3].output.value_json" and "not valid JSON" in description


async def test_the_metrics_count_a_run_in_the_workers_score_by_score() -> None:
    doc, cases = mixed_suite(40), recorded_cases(40)
    metrics = RunMetrics(CollectorRegistry())
    settings = Settings(host="127.0.0.1", port=0, metrics_enabled=False, scoring_workers=2)
    running, port = await create_server(settings, observer=metrics)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        srv = Server(running, channel, pb_grpc.ScoringServiceStub(channel), "")
        results, _ = await over_grpc(srv, doc, cases)
    finally:
        await channel.close()
        await running.stop(0)
    counted = {
        (s.labels["type"], s.labels["outcome"]): s.value
        for family in metrics.collect()
        if family.name == "scorewire_checks"
        for s in family.samples
        if s.value
    }
    expected: dict[tuple[str, str], float] = {}
    for r in results:
        for s in r.scores:
            outcome = "error" if s.HasField("error") else "pass" if s.passed else "fail"
            expected[(s.type, outcome)] = expected.get((s.type, outcome), 0) + 1
    assert counted == expected


async def test_missing_combinations_are_listed_twenty_then_counted(server: Server) -> None:
    # the cases' problems first, in case order; then the first 20 combinations with no
    # output, in run order (test, prompt, provider); then how many more
    doc = mixed_suite(40)
    cases = [c for c in recorded_cases(40) if c.test not in ("0", "1", "2")]
    cases.append(pb.Case(test="99", prompt="0", provider="echo"))
    err = await rejected(server, doc, cases)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    found = violations(err)
    assert found[0] == (f"cases[{len(cases) - 1}].test", "no test 99: the suite has 40")
    missing = found[1:]
    assert missing[:2] == [
        ("cases", f'no case for tests[0] ("test 0") × prompts[0] × {PROVIDERS[0]}'),
        ("cases", f'no case for tests[0] ("test 0") × prompts[0] × {PROVIDERS[1]}'),
    ]
    assert missing[19] == (
        "cases",
        f'no case for tests[2] ("test 2") × prompts[0] × {PROVIDERS[1]}',
    )
    assert missing[20:] == [("cases", "and 7 more combinations have no case")]


async def rejected(srv: Server, doc: str, cases: list[pb.Case]) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await over_grpc(srv, doc, cases)
    return err.value
