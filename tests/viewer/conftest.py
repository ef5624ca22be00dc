"""Known runs made by the real `scorewire run`, a headless Chromium, and where screenshots go.

`known_runs` runs two checkllm suites (recorded outputs, two prompts × two providers)
and one evalstone suite through the CLI into one directory, as a user would:

- `base` (oldest): 12 cases, 8 passed; the `long` test fails `contains` (no "END").
- `new`: 12 cases, 11 passed (91.7 %); `t0/p1/echo:b` now answers "Lyon" (the known
  regression), the `long` test now passes (four improvements); one output holds
  `<script>`; labels `model=m2`.
- `qa` (newest, evalstone): 2 cases, 1 passed.

The browser is Debian's Chromium driven by Playwright (`executable_path`, never
`playwright install`). Screenshots go to tests/artifacts/viewer/ (git-ignored, or
$SCOREWIRE_TEST_ARTIFACTS/viewer); the run's summary prints the directory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import ROOT, run_cli

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
