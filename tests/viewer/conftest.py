"""Known runs made by the real `scorewire run`, a headless Chromium, and where screenshots go.

`known_runs` runs two checkllm suites (recorded outputs, two prompts × two providers)
and one evalstone suite through the CLI into one directory, as a user would:

- `base` (oldest): 12 cases, 8 passed; the `long` test fails `contains` (no "END").
- `new`: 12 cases, 11 passed (91.7 %); `t0/p1/echo:b` now answers "Lyon" (the known
  regression), the `long` test now passes (four improvements); one output holds
  `<script>`; labels `model=m2`.
- `qa` (newest, evalstone): 2 cases, 1 passed.

`served` is a real `scorewire serve` with one bearer token (`TOKEN`, tenant alice) whose
viewer shows them; `sign_in` signs in as a browser does, over plain HTTP.

The browser is Debian's Chromium driven by Playwright (`executable_path`, never
`playwright install`). Screenshots go to tests/artifacts/viewer/ (git-ignored, or
$SCOREWIRE_TEST_ARTIFACTS/viewer); the run's summary prints the directory.
"""

from __future__ import annotations

import hashlib
import html
import http.client
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
import yaml
from scorewire.viewer.sessions import COOKIE, PRE_SESSION_COOKIE

from tests.cli.conftest import ROOT, run_cli
from tests.support.servers import free_port, serve_process, stop_process

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = (
    Path(os.environ.get("SCOREWIRE_TEST_ARTIFACTS", ROOT / "tests" / "artifacts")) / "viewer"
)

XSS_OUTPUT = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"> hello'
LONG_BASE = "lorem ipsum " * 100
LONG_NEW = LONG_BASE + "END"


def _suite(*, lyon: bool, long_output: str) -> dict[str, Any]:
    return {
        "description": "capitals",
        "prompts": ["Answer: {{q}}", "Briefly: {{q}}"],
        "providers": ["echo:a", "echo:b"],
        "tests": [
            {
                "description": "capital",
                "vars": {"q": "Capital of France?"},
                "outputs": {
                    "echo:a": ["Paris is the capital", "Paris."],
                    "echo:b": ["Paris", "Lyon" if lyon else "Paris!"],
                },
                "assert": [{"type": "contains", "value": "Paris"}],
            },
            {
                "description": "markup",
                "vars": {"q": "<b>hi</b>"},
                "output": XSS_OUTPUT,
                "assert": [{"type": "contains", "value": "hello"}],
            },
            {
                "description": "long",
                "vars": {"q": "long"},
                "output": long_output,
                "assert": [
                    {"type": "contains", "value": "END"},
                    {"type": "starts_with", "value": "lorem"},
                ],
            },
        ],
    }


EVALSTONE = {
    "checks": {"same": {"type": "exact"}},
    "datasets": {"qa": {"path": "qa.jsonl"}},
    "suites": {"qa": {"dataset": "qa", "checks": ["same"], "gate": {"min_pass_rate": 0.5}}},
}
ROWS = [
    {"id": "a", "input": "capital of France", "expected": "Paris", "output": "Paris"},
    {"id": "b", "input": "capital of Italy", "expected": "Rome", "output": "Milan"},
]


@dataclass(frozen=True)
class KnownRuns:
    """The results directory and its files."""

    root: Path
    base: Path
    new: Path
    qa: Path


def _run(tmp: Path, name: str, doc: dict[str, Any], out: Path, *args: str) -> None:
    suite = tmp / f"{name}.yaml"
    suite.write_text(yaml.safe_dump(doc, sort_keys=False))
    done = run_cli("run", str(suite), "--output", str(out), *args, cwd=tmp)
    assert done.code in (0, 1), done.stderr
    assert out.is_file(), done.stderr


@pytest.fixture(scope="session")
def known_runs(tmp_path_factory: pytest.TempPathFactory) -> KnownRuns:
    """The three runs, written by `scorewire run`, with fixed modification times."""
    tmp = tmp_path_factory.mktemp("viewer-suites")
    root = tmp_path_factory.mktemp("viewer-results")
    (root / "nightly").mkdir()
    base, new, qa = root / "base.json", root / "nightly" / "new.json", root / "qa.json"
    _run(tmp, "base", _suite(lyon=False, long_output=LONG_BASE), base)
    _run(tmp, "new", _suite(lyon=True, long_output=LONG_NEW), new)
    (tmp / "qa.jsonl").write_text("\n".join(json.dumps(r) for r in ROWS) + "\n")
    _run(tmp, "qa", EVALSTONE, qa)
    # Labels as the run store will give them; results files may carry them too.
    doc = json.loads(new.read_text())
    doc["labels"] = {"model": "m2"}
    new.write_text(json.dumps(doc))
    (root / "notes.json").write_text('{"not": "a results file"}')
    for age, path in enumerate((qa, new, base)):
        stamp = 1_800_000_000 - age * 3600
        os.utime(path, (stamp, stamp))
    return KnownRuns(root, base, new, qa)


TOKEN = "viewer-test-token-1"
"""The one bearer token of `served` (tenant alice)."""
FORM = "application/x-www-form-urlencoded"


@pytest.fixture(scope="module")
def served(known_runs: KnownRuns) -> Iterator[str]:
    """A server with auth on whose viewer shows the known runs; its viewer's base URL."""
    port = free_port()
    digest = hashlib.sha256(TOKEN.encode()).hexdigest()
    proc, _ = serve_process(
        {
            "SCOREWIRE_VIEWER_PORT": str(port),
            "SCOREWIRE_VIEWER_RESULTS_DIR": str(known_runs.root),
            "SCOREWIRE_AUTH_TOKENS": json.dumps(
                [{"name": "alice", "sha256": digest, "role": "caller"}]
            ),
        }
    )
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop_process(proc)


@dataclass(frozen=True)
class Reply:
    """One HTTP answer: status, headers (every Set-Cookie kept) and body."""

    status: int
    headers: http.client.HTTPMessage
    body: str

    def cookie(self, name: str) -> str | None:
        """The value the answer sets for cookie `name`, or None when it sets none."""
        for line in self.headers.get_all("Set-Cookie") or []:
            jar: SimpleCookie = SimpleCookie(line)
            if name in jar:
                return jar[name].value
        return None


def call(
    url: str, method: str = "GET", form: dict[str, str] | None = None, **headers: str
) -> Reply:
    """One request on a fresh connection, nothing added but what is given (and Host)."""
    parts = urlsplit(url)
    conn_type = (
        http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    )
    conn = conn_type(parts.netloc, timeout=30)
    body = None if form is None else urlencode(form)
    if form is not None:
        headers.setdefault("Content-Type", FORM)
    try:
        conn.request(method, parts.path + (f"?{parts.query}" if parts.query else ""), body, headers)
        response = conn.getresponse()
        return Reply(response.status, response.headers, response.read().decode())
    finally:
        conn.close()


def hidden(body: str, form_action: str, name: str = "csrf") -> str:
    """The value of hidden field `name` in the page's form posting to `form_action`."""
    form = re.search(rf'<form[^>]*action="{form_action}".*?</form>', body, re.S)
    assert form is not None, f"no form posting to {form_action}"
    field = re.search(rf'<input type="hidden" name="{name}" value="([^"]*)"', form.group(0))
    assert field is not None, f"no hidden {name} in the form posting to {form_action}"
    return html.unescape(field.group(1))


@dataclass(frozen=True)
class Signed:
    """A signed-in browser: its session cookie and the session's CSRF token."""

    sid: str
    csrf: str

    @property
    def cookie(self) -> str:
        """The Cookie header this browser sends."""
        return f"{COOKIE}={self.sid}"


def sign_in_form(base: str, path: str = "/") -> tuple[str, str]:
    """What a browser without a session is given at `path`: (its pre-session cookie,
    the sign-in form's CSRF field)."""
    page = call(base + path)
    assert page.status == 401
    cookie = page.cookie(PRE_SESSION_COOKIE)
    assert cookie, "the sign-in page sets no pre-session cookie"
    return cookie, hidden(page.body, "/login")


def sign_in(base: str, token: str = TOKEN, *, cookie: str = "") -> Signed:
    """Sign in on the form as a browser does (from the viewer's own origin); `cookie`
    is a Cookie header the browser already sends (an earlier session's)."""
    pre, field = sign_in_form(base)
    jar = "; ".join(c for c in (cookie, f"{PRE_SESSION_COOKIE}={pre}") if c)
    done = call(
        base + "/login",
        "POST",
        {"token": token, "next": "/", "csrf": field},
        Origin=base,
        Cookie=jar,
    )
    assert done.status == 303, done.body
    sid = done.cookie(COOKIE)
    assert sid
    page = call(base + "/", Cookie=f"{COOKIE}={sid}")
    assert page.status == 200
    return Signed(sid, hidden(page.body, "/logout"))


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, through Playwright. Per module, not per session:
    Playwright's sync API keeps an event loop set in this thread while it runs, and an
    asyncio test of another directory run after it in the same session would fail."""
    from playwright.sync_api import sync_playwright

    assert Path(CHROMIUM).exists(), "install Debian's chromium (scripts/install_test_deps.sh)"
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A fresh page (own cookies) whose script errors and dialogs fail the test; a screenshot of
    where it ended is saved under the artifacts directory."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    pg = context.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    # HTTP error statuses are asserted by the tests themselves; any other console error
    # (a script error, a blocked request) fails the test.
    pg.on(
        "console",
        lambda m: (
            errors.append(m.text)
            if m.type == "error" and not m.text.startswith("Failed to load resource")
            else None
        ),
    )
    pg.on("dialog", lambda d: (errors.append(f"dialog: {d.message}"), d.dismiss()))
    yield pg
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert errors == [], errors


def screenshot(pg: Any, name: str) -> None:
    """Save a screenshot of the page now, under the artifacts directory."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if ARTIFACTS.is_dir():
        terminalreporter.write_line(f"viewer screenshots: {ARTIFACTS}")
