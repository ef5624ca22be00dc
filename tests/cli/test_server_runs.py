"""`scorewire run --server`: the run is one run on the server, however many calls it takes.

The real CLI (a subprocess) against a real server in this process, with its own run store
and /metrics: `--record` records the run on the server (not in the CLI machine's store)
under the CLI's run name, with every case at the index of the results file; the server
counts the run once in `scorewire_suite_runs_total`, with the CLI's gate verdict.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from scorewire.runs import RunQuery, open_run_store
from scorewire.settings import Settings
from scorewire.v1 import runs_pb2 as rpb

from tests.cli.conftest import ROOT, cli_command, cli_env, run_cli, wait_for_line
from tests.cli.test_run import ECHO_SUITE, failing, write
from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.runs.test_run_parts import PartsServer, start_parts_server
from tests.server import custom_checks


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[tuple[PartsServer, str]]:
    """A server with its own run store (not the CLI's state directory) and /metrics."""
    (tmp_path / "server").mkdir()
    srv = await start_parts_server(tmp_path / "server")
    try:
        yield srv, f"127.0.0.1:{srv.running.port}"
    finally:
        await srv.channel.close()
        await srv.running.stop(0)


async def cli(*args: str, **env: str) -> Any:
    """The CLI, off the event loop that serves it."""
    return await asyncio.to_thread(run_cli, *args, **env)


async def runs_named(srv: PartsServer, name: str) -> list[rpb.Run]:
    return list((await srv.runs.ListRuns(rpb.ListRunsRequest(name=name))).runs)


async def local_runs_named(name: str) -> list[Any]:
    """Runs of that name in the store this machine's settings name (the CLI's)."""
    store = await open_run_store(Settings())
    try:
        return await store.list_runs(RunQuery(name=name), after=None, limit=10)
    finally:
        await store.close()


async def test_record_on_a_server_records_one_run_there(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    # Two failing checkllm runs (two tests: two RunSuite calls each) are two runs on the
    # server, each with every case and the failed gate, counted as two failures.
    srv, address = server
    name = f"nightly-{uuid.uuid4().hex[:8]}"
    suite = write(tmp_path, "s.yaml", failing(ECHO_SUITE))
    for i in range(2):
        out = tmp_path / f"r{i}.json"
        done = await cli(
            "run", str(suite), "--server", address, "--record", "--run-name", name,
            "--label", "git_sha=abc", "--output", str(out),
        )  # fmt: skip
        assert done.code == 1, done.stderr
        assert f"on {address}" in done.stderr and "recorded as run run_" in done.stderr
    runs = await runs_named(srv, name)
    assert len(runs) == 2
    doc = json.loads(out.read_text())
    run = runs[0]  # the newest: the second CLI run
    assert (run.source, run.status, dict(run.labels)) == (
        "OpenRun", rpb.RUN_STATUS_COMPLETE, {"git_sha": "abc"},
    )  # fmt: skip
    assert run.results == len(doc["results"]) == 4
    assert not run.summary.gate_passed and run.summary.cases == doc["summary"]["cases"]
    assert run.suite == suite.read_text()
    results = await srv.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run.run_id))
    assert sorted((r.result.index, r.result.sample_id) for r in results.results) == sorted(
        (r["index"], r["sample_id"]) for r in doc["results"]
    )
    # each case keeps its test's description (the viewer's test column reads it)
    assert {r.case.sample.metadata["description"] for r in results.results} == {"capital", ""}
    assert await local_runs_named(name) == []  # not in the CLI machine's store
    m = srv.scrape()
    assert m.value("scorewire_suite_runs_total", gate="fail") == 2
    assert m.value("scorewire_suite_runs_total", gate="pass") == 0


async def test_an_unrecorded_run_is_counted_once_with_its_gate(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    srv, address = server
    passing = await cli("run", str(write(tmp_path, "p.yaml", ECHO_SUITE)), "--server", address)
    failed = await cli(
        "run", str(write(tmp_path, "f.yaml", failing(ECHO_SUITE))), "--server", address
    )
    assert (passing.code, failed.code) == (0, 1), passing.stderr + failed.stderr
    m = srv.scrape()
    assert m.value("scorewire_suite_runs_total", gate="pass") == 1
    assert m.value("scorewire_suite_runs_total", gate="fail") == 1
    assert not (await srv.runs.ListRuns(rpb.ListRunsRequest())).runs


async def test_outputs_that_could_not_be_produced_are_in_the_recorded_run(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    # The provider fails one prompt: that case is never sent to be scored, yet the
    # recorded run holds it, with its error, at its index.
    srv, address = server
    doc = {
        "prompts": ["ok: {{q}}", "fail: {{q}}"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"q": "x"}, "assert": [{"type": "contains", "value": "ok"}]}],
    }
    fake = FakeOpenAI(api_key="sk-fake")

    def respond(body: Any) -> Reply:
        text = body["messages"][-1]["content"]
        return Reply(status=400) if text.startswith("fail") else Reply(content=f"{text} ok")

    fake.responder = respond
    name = f"gen-{uuid.uuid4().hex[:8]}"
    out = tmp_path / "r.json"
    with fake.running():
        done = await cli(
            "run", str(write(tmp_path, "s.yaml", doc)), "--server", address, "--record",
            "--run-name", name, "--output", str(out),
            SCOREWIRE_OPENAI_API_KEY="sk-fake", SCOREWIRE_OPENAI_BASE_URL=fake.url,
        )  # fmt: skip
    assert done.code == 1, done.stderr
    (run,) = await runs_named(srv, name)
    results = await srv.runs.ListRunResults(rpb.ListRunResultsRequest(run_id=run.run_id))
    by_index = {r.result.index: r.result for r in results.results}
    expected = {r["index"]: r for r in json.loads(out.read_text())["results"]}
    assert by_index.keys() == expected.keys() == {0, 1}
    errored = [i for i, r in by_index.items() if r.scores[0].error.code]
    assert errored == [i for i, r in expected.items() if r["scores"][0].get("error")] != []


async def test_a_run_the_server_refuses_is_recorded_incomplete(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    # The suite names a check the server does not have: the run was opened, its part
    # refused (exit 2); it ends incomplete, not running, and is not counted.
    srv, address = server
    (tmp_path / "sw_parts_custom.py").write_text(
        "from scorewire.engine.custom import check\n"
        "@check('sw_parts.always')\n"
        "def always(sample, output):\n"
        "    return True\n"
    )
    (tmp_path / "qa.jsonl").write_text(json.dumps({"id": "a", "output": "x"}) + "\n")
    suite = write(
        tmp_path,
        "s.yaml",
        "imports: [sw_parts_custom]\n"
        "checks:\n  mine: {type: sw_parts.always}\n"
        "datasets:\n  qa: qa.jsonl\n"
        "suites:\n  s: {dataset: qa}\n",
    )
    name = f"refused-{uuid.uuid4().hex[:8]}"
    env = {"PYTHONPATH": cli_env()["PYTHONPATH"] + f":{tmp_path}"}
    done = await cli("run", str(suite), "--server", address, "--record", "--run-name", name, **env)
    assert done.code == 2 and "unknown check type" in done.stderr, done.stderr
    (run,) = await runs_named(srv, name)
    assert run.status == rpb.RUN_STATUS_INCOMPLETE and run.results == 0
    assert srv.scrape().total("scorewire_suite_runs_total") == 0


async def test_a_server_without_a_run_store(tmp_path: Path) -> None:
    # No store, so no RunService: --record says why it cannot; without it the run is
    # scored as before, a run per call.
    from scorewire.server.app import create_server

    running, port = await create_server(Settings(host="127.0.0.1", port=0, metrics_enabled=False))
    suite, address = str(write(tmp_path, "s.yaml", ECHO_SUITE)), f"127.0.0.1:{port}"
    try:
        recorded = await cli("run", suite, "--server", address, "--record")
        plain = await cli("run", suite, "--server", address)
    finally:
        await running.stop(0)
    assert recorded.code == 2
    assert "cannot record a run sent in parts" in " ".join(recorded.stderr.split())
    assert plain.code == 0, plain.stderr


async def test_ctrl_c_leaves_the_recorded_run_incomplete(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    # SIGINT while the server scores a slow check: exit 130, and the run on the server is
    # incomplete (not running, not complete), uncounted.
    srv, address = server
    (tmp_path / "qa.jsonl").write_text(
        json.dumps({"id": "a", "output": "x", "metadata": {"sleep": 60}}) + "\n"
    )
    suite = write(
        tmp_path,
        "s.yaml",
        "imports: [tests.server.custom_checks]\n"
        "checks:\n  slow: {type: test.slow}\n"
        "datasets:\n  qa: qa.jsonl\n"
        "suites:\n  s: {dataset: qa}\n",
    )
    name = f"stopped-{uuid.uuid4().hex[:8]}"
    proc = subprocess.Popen(  # noqa: ASYNC220 - starts it; waits happen off the loop
        cli_command("run", str(suite), "--server", address, "--record", "--run-name", name),
        cwd=ROOT,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        found, lines = await asyncio.to_thread(wait_for_line, proc, "scoring 1 cases")
        assert found, "".join(lines)
        for _ in range(200):  # the part is being scored on the server
            runs = await runs_named(srv, name)
            if runs and custom_checks.in_flight():
                break
            await asyncio.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        await asyncio.to_thread(proc.communicate, timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130
    (run,) = await runs_named(srv, name)
    assert run.status == rpb.RUN_STATUS_INCOMPLETE
    assert srv.scrape().total("scorewire_suite_runs_total") == 0


async def test_a_run_recorded_on_the_server_is_a_baseline_there(
    tmp_path: Path, server: tuple[PartsServer, str]
) -> None:
    # The nightly passes and is recorded on the server; today `contains` looks for Spain
    # and fails where it passed: --baseline NAME finds the nightly there, run id and all.
    srv, address = server
    name = f"base-{uuid.uuid4().hex[:8]}"
    ok = await cli(
        "run", str(write(tmp_path, "ok.yaml", ECHO_SUITE)), "--server", address,
        "--record", "--run-name", name,
    )  # fmt: skip
    assert ok.code == 0, ok.stderr
    (nightly,) = await runs_named(srv, name)
    doc = json.loads(json.dumps(ECHO_SUITE))
    doc["tests"][0]["assert"][0]["value"] = "Spain"
    worse = await cli(
        "run", str(write(tmp_path, "worse.yaml", doc)), "--server", address, "--baseline", name
    )
    assert worse.code == 1
    said = " ".join(worse.stdout.split())
    assert f"passed in baseline {nightly.run_id}" in said and "t0/p0/echo (contains)" in said
