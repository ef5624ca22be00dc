"""The reviewer queue and the agreement page, in headless Chromium: a real `scorewire serve`
whose judge is the OpenAI stand-in records a run; a person works through the queue (the
least sure judge first), each verdict posted through `POST /review` as a label; the
agreement page then shows the check's kappa, band, confusion matrix, F1, base rate and
numeric figures over the pairs, computed by `labels.figures` as the Agreement RPC does,
and the run page lists each case's reviews."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from scorewire.client import Client

from tests.fakes.base import Reply
from tests.fakes.openai_server import FakeOpenAI
from tests.support.servers import free_port, serve_process, stop_process
from tests.viewer.conftest import screenshot

TOKEN = "viewer-agreement-token-0123456789"
KEY = "sk-test-viewer-agreement-0123456789"
CHECKS = [{"name": "polite", "type": "judge", "params": {"rubric": "Is it polite?"}}]
# level 5 (sure pass), 3 (unsure: the middle of the scale), 1 (sure fail)
OUTPUTS = {"s0": "thank you kindly", "s1": "fine whatever", "s2": "go away"}
LEVELS = {"kindly": 5, "whatever": 3, "away": 1}


@dataclass(frozen=True)
class Recorded:
    url: str
    run: str


def _judge(body: Any) -> Reply:
    user = body["messages"][-1]["content"]
    level = next(v for k, v in LEVELS.items() if k in user)
    return Reply(content=json.dumps({"reasoning": f"level {level}", "score": level}))


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Recorded]:
    fake = FakeOpenAI(api_key=KEY)
    fake.responder = _judge
    port = free_port()
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    with fake.running():
        proc, addr = serve_process(
            {
                "SCOREWIRE_STATE_DIR": str(tmp_path_factory.mktemp("viewer-agreement-state")),
                "SCOREWIRE_VIEWER_PORT": str(port),
                "SCOREWIRE_AUTH_TOKENS": json.dumps(
                    [{"name": "alice", "sha256": digest, "role": "caller"}]
                ),
                "SCOREWIRE_OPENAI_BASE_URL": fake.url,
                "SCOREWIRE_OPENAI_API_KEY": KEY,
                "SCOREWIRE_JUDGE_MODEL": "openai:gpt-4o-mini",
            }
        )
        try:
            cases = [{"sample": {"id": k}, "output": v} for k, v in OUTPUTS.items()]
            auth = (("authorization", f"Bearer {TOKEN}"),)
            with Client(addr, metadata=auth) as client:
                _, summary = client.run_suite(
                    cases, checks=CHECKS, record=True, run_name="reviewed"
                ).collect()
            yield Recorded(f"http://127.0.0.1:{port}", str(summary.run_id))
        finally:
            stop_process(proc)


def _sign_in(page: Any, url: str) -> None:
    assert page.goto(url).status == 401
    page.fill("input[name=token]", TOKEN)
    with page.expect_navigation() as navigation:
        page.click("form.login button[type=submit]")
    assert navigation.value.status == 200


def _review(page: Any, verdict: str, note: str) -> None:
    page.fill("form.review input[name=note]", note)
    with page.expect_navigation() as navigation:
        page.click(f"form.review button.verdict.{verdict}")
    assert navigation.value.status == 200


def test_the_queue_then_the_agreement_page(page: Any, recorded: Recorded) -> None:
    queue = f"{recorded.url}/runs/{recorded.run}/queue"
    _sign_in(page, queue)
    # The judge was least sure of s1 (level 3 of 5, the middle): it comes first.
    assert page.locator("#waiting").inner_text().startswith("3 judged outputs")
    assert page.locator("article.queued").get_attribute("data-sample") == "s1"
    _review(page, "fail", "rude")  # the judge's level 3 fails too (no pass level): agree
    assert page.url == queue and page.locator("#waiting").inner_text().startswith("2 ")
    # Equally sure of s0 (level 5) and s2 (level 1); people disagree with both.
    for _ in range(2):
        sample = page.locator("article.queued").get_attribute("data-sample")
        assert sample in ("s0", "s2")
        if sample == "s0":
            _review(page, "fail", "people disagree")  # the judge passed it
        else:
            _review(page, "pass", "fine by me")  # the judge failed it
    assert page.locator("#queue-empty").is_visible()
    screenshot(page, "review-queue-empty")

    page.goto(f"{recorded.url}/runs/{recorded.run}/agreement")
    check = page.locator("article.check-agreement[data-check=polite]")
    assert check.get_attribute("data-judge") == "openai:gpt-4o-mini"

    def figure(name: str) -> str:
        return str(check.locator(f"tr[data-figure={name}] td").inner_text())

    cells = [
        int(check.locator(f"td[data-cell={c}]").inner_text())
        for c in ("pass-pass", "pass-fail", "fail-pass", "fail-fail")
    ]
    assert cells == [0, 1, 1, 1]
    # p_o = 1/3, p_e = (1/3)(1/3) + (2/3)(2/3) = 5/9: kappa = (3/9 - 5/9) / (4/9) = -0.5
    assert figure("kappa") == "-0.500" and figure("band") == "poor"
    assert figure("accuracy") == "33.3%" and figure("base-rate") == "33.3%"
    assert figure("f1") == "0.000" and figure("pairs").startswith("3")
    # values 1, 0.5, 0 against verdicts 0, 0, 1: MAE (1 + 0.5 + 1) / 3
    assert figure("mae") == "0.833"
    rows = check.locator("table.disagreements tbody tr")
    assert [rows.nth(i).get_attribute("data-sample") for i in range(rows.count())] == [
        "s0",
        "s2",
    ]
    assert "people disagree" in rows.first.inner_text()
    screenshot(page, "agreement-page")

    # And the run page shows each case's review under its scores.
    page.goto(f"{recorded.url}/runs/{recorded.run}?outcome=all")
    rows = page.locator("#case-table tbody tr")
    shown = {
        rows.nth(i).locator(".sid").inner_text(): rows.nth(i).locator("ul.reviews").inner_text()
        for i in range(rows.count())
    }
    assert "fail" in shown["s0"] and "alice: people disagree" in shown["s0"]
    assert "pass" in shown["s2"] and "alice: fine by me" in shown["s2"]
    assert "alice: rude" in shown["s1"]
    screenshot(page, "run-page-reviews")
