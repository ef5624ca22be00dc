"""`scorewire view` serving the viewer in one command, as a user runs it: a subprocess that
prints its address, pages fetched over HTTP and in headless Chromium, Ctrl-C to stop.

Each source shows its runs: this machine's run store (what `scorewire run --record`
kept), a results file, and a server's runs through its RunService (the token's own only).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from scorewire.client import Client
from scorewire.labels import LabelQuery, open_label_store
from scorewire.settings import Settings

from tests.cli.conftest import ROOT, cli_env, run_cli
from tests.support.servers import serve_process, stop_process
from tests.viewer.conftest import KnownRuns, call

SUITE = {
    "description": "capitals",
    "prompts": ["Answer: {{q}}"],
    "providers": ["echo"],
    "tests": [
        {
            "description": "france",
            "vars": {"q": "Capital of France?"},
            "assert": [{"type": "contains", "value": "France"}],
        },
        {
            "description": "greeting",
            "vars": {"q": "hi"},
            "output": "hello",
            "assert": [{"type": "contains", "value": "bye"}],
        },
    ],
}


@contextmanager
def viewing(*args: str, **env: str) -> Iterator[str]:
    """`scorewire view --no-open --port 0 ARGS` running; its address. Stopped with Ctrl-C,
    which must end it with exit 0."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "scorewire.cli.main", "view", "--no-open", "--port", "0", *args],
        cwd=ROOT,
        env=cli_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            proc.kill()
            raise AssertionError(f"scorewire view did not start: {url!r} {proc.stderr.read()}")
        yield url
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def test_the_runs_recorded_on_this_machine(tmp_path: Path, page: Any) -> None:
    # The default source: the run store this machine's settings name.
    state = str(tmp_path / "state")
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    done = run_cli(
        "run", str(suite), "--record", "--run-name", "local-nightly", SCOREWIRE_STATE_DIR=state
    )
    assert done.code == 1 and "recorded as run" in done.stderr, done.stderr
    with viewing(SCOREWIRE_STATE_DIR=state) as url:
        page.goto(url)
        assert "local-nightly" in page.inner_text("body")
        page.click("text=local-nightly")
        body = page.inner_text("body")
        assert "contains" in body and "hello" in body  # the failing case, with its output


def _recorded_here(tmp_path: Path, name: str) -> str:
    """A run recorded in a fresh state directory (its failing case's output: "hello")."""
    state = str(tmp_path / "state")
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    done = run_cli("run", str(suite), "--record", "--run-name", name, SCOREWIRE_STATE_DIR=state)
    assert done.code == 1 and "recorded as run" in done.stderr, done.stderr
    return state


def _labels_stored(state: str) -> list[Any]:
    """Every label in the label store of the state directory `state`."""

    async def read() -> list[Any]:
        store = await open_label_store(Settings(state_dir=state))
        try:
            found = await store.list_labels(LabelQuery(), after_id=0, limit=100)
            return [label for _, label in found]
        finally:
            await store.close()

    with ThreadPoolExecutor(1) as thread:  # the browser's event loop runs in this one
        return thread.submit(asyncio.run, read()).result()


def test_a_review_in_the_page_is_a_label_in_this_machines_store(tmp_path: Path, page: Any) -> None:
    # One local user, no sign-in: the run page offers pass/fail and a note per case; the
    # review is written to the label store and shown beside the case, also after a restart.
    state = _recorded_here(tmp_path, "local-review")
    with viewing(SCOREWIRE_STATE_DIR=state) as url:
        page.goto(url)
        page.click("text=local-review")
        row = page.locator("#case-table tbody tr", has_text="hello")
        assert row.locator("ul.reviews").count() == 0
        row.locator("form.review input[name=note]").fill("a greeting is <b>fine</b>")
        with page.expect_navigation() as back:
            row.locator("form.review button.pass").click()
        assert back.value.status == 200 and "/runs/" in page.url
        shown = page.locator("#case-table tbody tr", has_text="hello").locator("ul.reviews")
        assert shown.inner_text() == "pass viewer: a greeting is <b>fine</b>"
        run_page = page.url
    stored = _labels_stored(state)
    assert [(x.passed, x.labeller, x.note) for x in stored] == [
        (True, "viewer", "a greeting is <b>fine</b>")
    ]
    assert stored[0].output_hash == hashlib.sha256(b"hello").hexdigest()
    with viewing(SCOREWIRE_STATE_DIR=state) as url:  # read back from the store
        page.goto(url + run_page.split("/", 3)[3])
        again = page.locator("#case-table tbody tr", has_text="hello").locator("ul.reviews")
        assert again.inner_text() == "pass viewer: a greeting is <b>fine</b>"


def test_a_review_without_the_pages_csrf_token_or_origin_stores_nothing(tmp_path: Path) -> None:
    state = _recorded_here(tmp_path, "local-forged")
    with viewing(SCOREWIRE_STATE_DIR=state) as url:
        body = get(url)[1]
        run_id = re.search(r'href="/runs/([^"]+)"', body)
        assert run_id is not None, body
        page = call(f"{url}runs/{run_id[1]}")
        token = re.search(r'data-csrf="([^"]+)"', page.body)
        cookie = page.headers.get("Set-Cookie", "").split(";")[0]
        assert token is not None and cookie, page.headers
        form = {"run": run_id[1], "case": "1", "passed": "false", "note": "forged"}
        origin = url.rstrip("/")
        for extra, headers in (
            ({}, {"Origin": origin, "Cookie": cookie}),  # no CSRF token
            ({"csrf": "0" * 43}, {"Origin": origin, "Cookie": cookie}),  # a wrong one
            ({"csrf": token[1]}, {"Origin": "https://evil.example", "Cookie": cookie}),
            ({"csrf": token[1]}, {"Origin": origin}),  # the token without its cookie
        ):
            done = call(url + "review", "POST", {**form, **extra}, **headers)
            assert done.status == 403, (extra, headers, done.status)
        taken = {**form, "csrf": token[1]}
        done = call(url + "review", "POST", taken, Origin=origin, Cookie=cookie)
        assert done.status == 303  # the same form with its token and cookie is taken
    assert [x.note for x in _labels_stored(state)] == ["forged"]


def test_a_results_file(known_runs: KnownRuns, page: Any) -> None:
    with viewing(str(known_runs.new), "--compare", str(known_runs.base)) as url:
        status, body = get(url)
        assert status == 200 and 'data-run="new"' in body and 'data-run="base"' in body
        page.goto(url + "runs/new?outcome=all")
        assert "Lyon" in page.inner_text("body")  # the regressed case's output


def test_a_results_directory(known_runs: KnownRuns) -> None:
    with viewing(str(known_runs.root)) as url:
        _, body = get(url)
        for run_id in ("base", "nightly/new", "qa"):
            assert f'data-run="{run_id}"' in body


def _token(name: str) -> str:
    return f"view-command-token-of-{name}"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A server with bearer tokens: alice has recorded `alice-run`, bob `bob-run`."""
    tokens = [
        {"name": n, "sha256": hashlib.sha256(_token(n).encode()).hexdigest(), "role": "caller"}
        for n in ("alice", "bob")
    ]
    proc, addr = serve_process(
        {
            "SCOREWIRE_STATE_DIR": str(tmp_path_factory.mktemp("view-server-state")),
            "SCOREWIRE_AUTH_TOKENS": json.dumps(tokens),
        }
    )
    try:
        for who in ("alice", "bob"):
            auth = (("authorization", f"Bearer {_token(who)}"),)
            with Client(addr, metadata=auth) as client:
                cases = [
                    {"sample": {"id": f"s{i}"}, "output": t}
                    for i, t in enumerate(["Paris", "Lyon"])
                ]
                client.run_suite(
                    cases, compact=["contains:Paris"], record=True, run_name=f"{who}-run"
                ).collect()
        yield addr
    finally:
        stop_process(proc)


def test_a_servers_runs_as_its_token_sees_them(server: str, page: Any) -> None:
    with viewing("--server", server, SCOREWIRE_TOKEN=_token("alice")) as url:
        page.goto(url)
        listing = page.inner_text("body")
        assert "alice-run" in listing and "bob-run" not in listing  # another tenant's
        page.click("text=alice-run")
        body = page.inner_text("body")
        assert "contains:Paris" in body and "Lyon" in body  # the failing case


def test_a_server_that_refuses_the_token_is_shown_as_unavailable(server: str) -> None:
    with viewing("--server", server, SCOREWIRE_TOKEN="not-a-token") as url:
        status, body = get(url)
        assert status == 503 and "UNAUTHENTICATED" in body


def test_only_loopback_names_are_answered(tmp_path: Path) -> None:
    # No sign-in on this viewer: a page whose name was rebound to 127.0.0.1 gets nothing.
    with viewing(SCOREWIRE_STATE_DIR=str(tmp_path)) as url:
        assert call(url, Host="attacker.example").status == 421
        assert call(url.replace("127.0.0.1", "localhost")).status == 200


def test_a_taken_port_and_bad_arguments_say_so(tmp_path: Path) -> None:
    with viewing(SCOREWIRE_STATE_DIR=str(tmp_path)) as url:
        port = url.rsplit(":", 1)[1].strip("/")
        taken = subprocess.run(
            [sys.executable, "-m", "scorewire.cli.main", "view", "--no-open", "--port", port],
            cwd=ROOT, env=cli_env(SCOREWIRE_STATE_DIR=str(tmp_path)),
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert taken.returncode == 2 and "--port" in taken.stderr
    both = subprocess.run(
        [sys.executable, "-m", "scorewire.cli.main", "view", "x.json", "--server", "h:1"],
        cwd=ROOT, env=cli_env(), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert both.returncode == 2 and "not both" in both.stderr


def test_a_cost_under_a_cent_is_not_shown_as_nothing(known_runs: KnownRuns, tmp_path: Path) -> None:
    # One cheap judge call's $0.000144 read "$0.0000" on the run page and in the list.
    doc = json.loads(known_runs.qa.read_text())
    doc["summary"]["cost_usd"] = doc["summary"]["judge_cost_usd"] = 0.000144
    doc["summary"]["checks"][0]["cost_usd"] = 0.000144
    path = tmp_path / "cheap.json"
    path.write_text(json.dumps(doc))
    with viewing(str(path)) as url:
        _, listing = get(url)
        _, run = get(url + "runs/cheap")
    assert "$0.00014" in listing
    assert re.search(r'data-stat="cost">\$0\.00014<', run)
    assert re.search(r'<td class="num">\$0\.00014</td>', run)  # the check's row


def test_the_served_run_page_has_a_row_per_test_and_assertion(tmp_path: Path) -> None:
    # Both tests assert `contains` (France passes, bye fails): two rows named by test, as
    # the CLI's table has, not one `contains` at 50%.
    state = str(tmp_path / "state")
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump(SUITE))
    assert run_cli("run", str(suite), "--record", SCOREWIRE_STATE_DIR=state).code == 1
    with viewing(SCOREWIRE_STATE_DIR=state) as url:
        _, listing = get(url)
        run_id = re.findall(r'data-run="([^"]+)"', listing)[0]
        _, page = get(f"{url}runs/{run_id}")
    rows = re.findall(
        r'<tr data-check="contains" data-test="([^"]+)">.*?<span class="rate">([^<]*)</span>',
        page,
        re.S,
    )
    assert rows == [("0 france", "100.0%"), ("1 greeting", "0.0%")]
