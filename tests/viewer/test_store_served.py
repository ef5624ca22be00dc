"""The served viewer over the run store: a real `scorewire serve` with bearer tokens and
SCOREWIRE_VIEWER_PORT, runs recorded by RunSuite calls through the real Python client,
and the pages fetched over HTTP (and once in headless Chromium).

alice records two runs of one suite (`base`, then `new` with labels `model=m2`), bob one;
root is an admin. Each token sees only its own runs; root sees them all.

Checks: `has_paris` (contains "Paris") and `short` (at most 12 characters).

- base: s0 "Paris" and s1 "Paris!" pass, s2 "Lyon" fails has_paris, s3 "Paris, of
  course" fails short: 2 of 4 (50.0%).
- new: s0 and s3 unchanged, s1 "Berlin" fails (the regression), s2 "Paris" passes (the
  improvement): 2 of 4 again.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from scorewire.client import Client

from tests.support.servers import free_port, serve_process, stop_process
from tests.viewer.conftest import call, screenshot, sign_in

ROLES = {"alice": "caller", "bob": "caller", "root": "admin"}
CHECKS = [
    {"name": "has_paris", "type": "contains", "params": {"needles": ["Paris"]}},
    {"name": "short", "type": "regex", "params": {"pattern": "^.{0,12}$"}},
]


BASE = ("Paris", "Paris!", "Lyon", "Paris, of course")
NEW = ("Paris", "Berlin", "Paris", "Paris, of course")


def token(name: str) -> str:
    return f"viewer-store-token-of-{name}"


@dataclass(frozen=True)
class Runs:
    """The viewer's URL and the recorded runs' ids."""

    url: str
    base: str
    new: str
    bob: str
    addr: str = ""
    """The gRPC server's address (labels are read back through LabelService)."""


def _record(addr: str, who: str, name: str, outputs: list[str], **kw: Any) -> str:
    cases = [
        {"sample": {"id": f"s{i}", "input": f"q{i}", "expected": "Paris"}, "output": text}
        for i, text in enumerate(outputs)
    ]
    auth = (("authorization", f"Bearer {token(who)}"),)
    with Client(addr, metadata=auth) as client:
        _, summary = client.run_suite(
            cases, checks=CHECKS, record=True, run_name=name, **kw
        ).collect()
    assert summary.run_id
    return str(summary.run_id)


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    port = free_port()
    tokens = [
        {"name": n, "sha256": hashlib.sha256(token(n).encode()).hexdigest(), "role": r}
        for n, r in ROLES.items()
    ]
    proc, addr = serve_process(
        {
            "SCOREWIRE_STATE_DIR": str(tmp_path_factory.mktemp("viewer-store-state")),
            "SCOREWIRE_VIEWER_PORT": str(port),
            "SCOREWIRE_AUTH_TOKENS": json.dumps(tokens),
        }
    )
    try:
        base = _record(addr, "alice", "capitals", [*BASE])
        new = _record(addr, "alice", "capitals", [*NEW], labels={"model": "m2"})
        bob = _record(addr, "bob", "bobs-suite", ["Rome"])
        yield Runs(f"http://127.0.0.1:{port}", base, new, bob, addr)
    finally:
        stop_process(proc)


def _get(url: str, who: str | None) -> tuple[int, str]:
    headers = {"Authorization": f"Bearer {token(who)}"} if who else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


def _row(body: str, attr: str, value: str) -> str:
    """The HTML of the table row whose `attr` is `value`."""
    match = re.search(rf'<tr[^>]*{attr}="{re.escape(value)}"[^>]*>(.*?)</tr>', body, re.S)
    assert match is not None, f"no row with {attr}={value!r}"
    return match.group(1)


def _cells(row: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
    ]


def test_the_runs_list_shows_a_tokens_own_recorded_runs(runs: Runs) -> None:
    status, body = _get(runs.url + "/", "alice")
    assert status == 200
    ids = re.findall(r'<tr[^>]*data-run="([^"]+)"', body)
    assert ids == [runs.new, runs.base]  # newest first; bob's run is not listed
    assert "bobs-suite" not in body
    cells = _cells(_row(body, "data-run", runs.new))
    assert cells[0].startswith("capitals") and runs.new in cells[0]
    assert cells[2:7] == ["4", "50.0%", "0.0%", "$0.0000", "gate passed"]
    assert "model=m2" in cells[7]


def test_an_admin_lists_every_run(runs: Runs) -> None:
    status, body = _get(runs.url + "/", "root")
    assert status == 200
    assert re.findall(r'<tr[^>]*data-run="([^"]+)"', body) == [runs.bob, runs.new, runs.base]


def _data(body: str, name: str) -> list[dict[str, Any]]:
    """The JSON the page's script draws its table from."""
    match = re.search(rf'<script type="application/json" id="{name}">(.*?)</script>', body, re.S)
    assert match is not None, f"no {name} in the page"
    return list(json.loads(match.group(1)))


def test_the_run_page_shows_the_failing_cases_with_their_reasons(runs: Runs) -> None:
    status, body = _get(f"{runs.url}/runs/{runs.base}", "alice")  # failing cases by default
    assert status == 200
    assert 'data-stat="pass-rate">50.0%' in body
    cases = {c["id"]: c for c in _data(body, "case-data")}
    assert list(cases) == ["s2", "s3"]
    lyon = cases["s2"]
    assert (lyon["input"], lyon["expected"], lyon["output"]) == ("q2", "Paris", "Lyon")
    (has_paris,) = [s for s in lyon["scores"] if s[0] == "has_paris"]
    assert has_paris[3] == "failed" and has_paris[4]  # with the check's reason
    status, every = _get(f"{runs.url}/runs/{runs.base}?outcome=all", "alice")
    assert status == 200 and [c["id"] for c in _data(every, "case-data")] == [
        "s0",
        "s1",
        "s2",
        "s3",
    ]
    status, short = _get(f"{runs.url}/runs/{runs.base}?check=short&outcome=failed", "alice")
    assert status == 200 and [c["id"] for c in _data(short, "case-data")] == ["s3"]


def test_the_compare_page_lists_the_regression_first(runs: Runs) -> None:
    status, body = _get(f"{runs.url}/compare?base={runs.base}&run={runs.new}", "alice")
    assert status == 200
    changes = _data(body, "change-data")
    assert [(c["kind"], c["key"]) for c in changes] == [("regressed", "s1"), ("improved", "s2")]
    assert changes[0]["base"]["output"] == "Paris!" and changes[0]["case"]["output"] == "Berlin"


@pytest.mark.parametrize(
    "path", ["/runs/{bob}", "/runs/{bob}?outcome=all", "/compare?base={base}&run={bob}"]
)
def test_another_tokens_run_is_not_found(runs: Runs, path: str) -> None:
    url = runs.url + path.format(bob=runs.bob, base=runs.base)
    status, body = _get(url, "alice")
    assert status == 404 and "Rome" not in body
    assert _get(f"{runs.url}/runs/{runs.bob}", "bob")[0] == 200  # its owner sees it
    assert _get(f"{runs.url}/runs/{runs.bob}", "root")[0] == 200  # and so does an admin


def test_without_a_token_nothing_is_shown(runs: Runs) -> None:
    status, body = _get(f"{runs.url}/runs/{runs.base}", None)
    assert status == 401 and "Lyon" not in body


def test_the_run_page_in_a_browser(page: Any, runs: Runs) -> None:
    assert page.goto(f"{runs.url}/runs/{runs.new}").status == 401
    page.fill("input[name=token]", token("alice"))
    with page.expect_navigation() as navigation:
        page.click("form.login button[type=submit]")
    assert navigation.value.status == 200 and page.url == f"{runs.url}/runs/{runs.new}"
    assert page.locator("[data-stat=pass-rate]").inner_text() == "50.0%"
    rows = page.locator("#case-table tbody tr")  # drawn by the page's script
    assert [rows.nth(i).locator(".sid").inner_text() for i in range(rows.count())] == [
        "s1",
        "s3",
    ]
    assert "Berlin" in rows.first.inner_text()
    screenshot(page, "store-run")


# ---- search, diffs and downloads over the run store ----------------------------------------


def _fetch(url: str, who: str | None) -> tuple[int, dict[str, str], str]:
    headers = {"Authorization": f"Bearer {token(who)}"} if who else {}
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read().decode()


def test_the_run_page_searches_on_the_server_too(runs: Runs) -> None:
    # a search in the address holds whatever page of cases the server sends
    status, body = _get(f"{runs.url}/runs/{runs.base}?outcome=all&q=LYON", "alice")
    assert status == 200 and [c["id"] for c in _data(body, "case-data")] == ["s2"]
    assert 'value="LYON"' in body  # and stays in the search box


def test_the_compare_page_carries_a_word_diff(runs: Runs) -> None:
    status, body = _get(f"{runs.url}/compare?base={runs.base}&run={runs.new}", "alice")
    assert status == 200
    diffs = {c["key"]: c["diff"] for c in _data(body, "change-data")}
    assert diffs == {
        "s1": [["-", "Paris!"], ["+", "Berlin"]],
        "s2": [["-", "Lyon"], ["+", "Paris"]],
    }


def test_a_csv_download_holds_the_filtered_cases_one_row_per_score(runs: Runs) -> None:
    status, headers, body = _fetch(
        f"{runs.url}/export?run={runs.base}&format=csv&outcome=failing", "alice"
    )
    assert status == 200 and headers["Content-Type"] == "text/csv; charset=utf-8"
    assert headers["Content-Disposition"] == f'attachment; filename="{runs.base}-cases.csv"'
    rows = list(csv.DictReader(io.StringIO(body)))
    assert [(r["sample_id"], r["check"], r["score_outcome"]) for r in rows] == [
        ("s2", "has_paris", "failed"),
        ("s2", "short", "passed"),
        ("s3", "has_paris", "passed"),
        ("s3", "short", "failed"),
    ]
    assert rows[0]["output"] == "Lyon" and rows[0]["outcome"] == "failed" and rows[0]["reason"]


def test_a_json_download_follows_the_check_and_search(runs: Runs) -> None:
    url = f"{runs.url}/export?run={runs.new}&format=json&check=has_paris&outcome=all&q=Q1"
    status, headers, body = _fetch(url, "alice")
    assert status == 200 and headers["Content-Type"] == "application/json; charset=utf-8"
    doc = json.loads(body)
    assert doc["run"] == runs.new
    assert doc["filter"] == {"check": "has_paris", "outcome": "all", "q": "Q1"}
    assert [c["sample_id"] for c in doc["cases"]] == ["s1"]  # its input is q1: 1 of 4
    assert doc["cases"][0]["scores"][0]["name"] == "has_paris"


@pytest.mark.parametrize("who, status", [("alice", 404), (None, 401), ("bob", 200), ("root", 200)])
def test_a_download_keeps_to_the_tokens_own_runs(runs: Runs, who: str | None, status: int) -> None:
    got, _, body = _fetch(f"{runs.url}/export?run={runs.bob}&format=csv&outcome=all", who)
    assert got == status
    assert ("Rome" in body) == (status == 200)


@pytest.mark.parametrize(
    "query", ["format=xml&run={run}", "format=csv", "run={run}&outcome=nope", "run={run}&check=x"]
)
def test_a_bad_download_request_is_400(runs: Runs, query: str) -> None:
    assert _fetch(f"{runs.url}/export?{query.format(run=runs.base)}", "alice")[0] == 400


def test_searching_in_the_browser_narrows_the_download(page: Any, runs: Runs) -> None:
    assert page.goto(f"{runs.url}/runs/{runs.new}?outcome=all").status == 401
    page.fill("input[name=token]", token("alice"))
    with page.expect_navigation():
        page.click("form.login button[type=submit]")
    rows = page.locator("#case-table tbody tr")
    assert rows.count() == 4
    page.fill("#filter-q", "berlin")  # in the page, as one types: no round trip
    assert rows.count() == 1 and rows.first.locator(".sid").inner_text() == "s1"
    with page.expect_download() as download:
        page.click("#export-csv")
    saved = download.value.path()
    rows_csv = list(csv.DictReader(io.StringIO(saved.read_text())))
    assert {r["sample_id"] for r in rows_csv} == {"s1"} and rows_csv[0]["output"] == "Berlin"
    assert download.value.suggested_filename == f"{runs.new}-cases.csv"
    screenshot(page, "store-search-export")


# ---- human review: a label through the page, with the session's tenancy and CSRF ---------


def _labels(addr_url: str, who: str, sample_id: str) -> list[Any]:
    auth = (("authorization", f"Bearer {token(who)}"),)
    with Client(addr_url, metadata=auth) as client:
        return list(client.list_labels(sample_id=sample_id, include_history=True).labels)


def test_a_review_in_the_page_is_a_label_of_that_output(page: Any, runs: Runs) -> None:
    assert page.goto(f"{runs.url}/runs/{runs.base}").status == 401
    page.fill("input[name=token]", token("alice"))
    with page.expect_navigation():
        page.click("form.login button[type=submit]")
    row = page.locator("#case-table tbody tr", has_text="Lyon")
    row.locator("form.review input[name=note]").fill("Lyon is <b>not</b> the capital")
    with page.expect_navigation() as back:
        row.locator("form.review button.fail").click()
    assert back.value.status == 200 and page.url == f"{runs.url}/runs/{runs.base}"
    (label,) = _labels(runs.addr, "alice", "s2")
    assert (label.passed, label.labeller, label.tenant) == (False, "alice", "alice")
    assert label.note == "Lyon is <b>not</b> the capital"
    assert label.output_hash == hashlib.sha256(b"Lyon").hexdigest()
    screenshot(page, "store-review")


def test_a_review_without_the_sessions_csrf_token_stores_nothing(runs: Runs) -> None:
    signed = sign_in(runs.url, token("alice"))
    form = {"run": runs.base, "case": "3", "passed": "true", "note": "forged"}
    for extra, headers in (
        ({}, {"Origin": runs.url}),  # no CSRF token
        ({"csrf": "0" * 43}, {"Origin": runs.url}),  # a wrong one
        ({"csrf": signed.csrf}, {"Origin": "https://evil.example"}),  # another site
    ):
        done = call(
            runs.url + "/review", "POST", {**form, **extra}, Cookie=signed.cookie, **headers
        )
        assert done.status == 403
    assert _labels(runs.addr, "alice", "s3") == []


def test_a_review_of_another_tenants_run_is_not_found(runs: Runs) -> None:
    signed = sign_in(runs.url, token("alice"))
    form = {"run": runs.bob, "case": "0", "passed": "false", "csrf": signed.csrf}
    done = call(runs.url + "/review", "POST", form, Cookie=signed.cookie, Origin=runs.url)
    assert done.status == 404 and "Rome" not in done.body
    assert _labels(runs.addr, "root", "s0") == []  # nothing in any tenant
    # the same form on her own run is stored, under her tenant
    own = call(
        runs.url + "/review",
        "POST",
        {**form, "run": runs.new, "passed": "true"},
        Cookie=signed.cookie,
        Origin=runs.url,
    )
    assert own.status == 303 and own.headers["Location"] == f"/runs/{runs.new}"
    (label,) = _labels(runs.addr, "root", "s0")
    assert (label.tenant, label.labeller, label.passed) == ("alice", "alice", True)
