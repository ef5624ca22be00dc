"""The results viewer on a large run: writing the offline report, serving its pages, and
(when Debian's Chromium and Playwright are installed) opening them in a headless browser.

Run: `make bench-viewer` (or `.venv/bin/python bench/viewer_bench.py [--cases N]`).
It makes a results file of N cases × 5 checks (20,000 by default; one case in ten
fails, outputs of 30-600 characters), then prints, each the best of `--rounds`:

- reading and parsing the file (`ResultsFile`);
- rendering the offline report (`render_report`) and its size;
- the served runs list (cold: the file is parsed; warm: cached), the run page (failing
  cases, and every case up to SCOREWIRE_VIEWER_MAX_CASES) and a compare page, over HTTP
  from a `ViewerServer` on a free loopback port;
- in Chromium: loading the offline report until its cases are drawn, and refiltering.

Targets: the report opens in the browser in about a second; a warm run page in well
under a second.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "service")]

from scorewire.viewer import ResultsDirectory, ResultsFile  # noqa: E402
from scorewire.viewer.render import render_report  # noqa: E402
from scorewire.viewer.serving import ViewerServer  # noqa: E402

CHECKS = ["has_answer", "short", "no_refusal", "cites", "polite"]
CHROMIUM = Path("/usr/bin/chromium")


def results_document(cases: int, seed: int = 1) -> dict[str, Any]:
    """A `scorewire.results/1` document of `cases` cases, one in ten failing one check."""
    rng = random.Random(seed)
    results = []
    for i in range(cases):
        failing = CHECKS[rng.randrange(len(CHECKS))] if i % 10 == 0 else None
        scores = [
            {"name": n, "type": "contains", "value": 0.0 if n == failing else 1.0,
             "passed": n != failing, "reason": f"{n}: {'missing' if n == failing else 'found'}",
             "cost_usd": 0.0, "latency_ms": 0.01, "cached": False, "unpriced": False,
             "skipped": False, "error": None}
            for n in CHECKS
        ]  # fmt: skip
        results.append(
            {"index": i, "sample_id": f"s{i}", "group": "", "description": f"case {i}",
             "provider": "", "prompt": None, "input": {"question": f"question {i}?"},
             "expected": "Paris", "output": "Paris is the capital. " * rng.randint(1, 27),
             "output_value": None, "generation": {}, "passed": failing is None,
             "scores": scores}
        )  # fmt: skip
    passed = sum(r["passed"] for r in results)
    checks = []
    for n in CHECKS:
        ok = sum(s["passed"] for r in results for s in r["scores"] if s["name"] == n)
        checks.append({"name": n, "type": "contains", "passed": ok, "failed": cases - ok,
                       "errored": 0, "skipped": 0, "pass_rate": ok / cases,
                       "mean_value": ok / cases, "cost_usd": 0.0, "cached": 0})  # fmt: skip
    gate = {"passed": False, "reasons": ["pass rate below 1"]}
    summary = {"cases": cases, "planned_cases": cases, "cases_passed": passed,
               "pass_rate": passed / cases, "error_rate": 0.0, "cost_usd": 0.0,
               "gate": gate, "checks": checks}  # fmt: skip
    return {"format": "scorewire.results/1", "suite": {"name": "bench", "format": "evalstone"},
            "interrupted": False, "summary": summary, "results": results}  # fmt: skip


def best(rounds: int, work: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of `rounds` runs of `work`, in seconds, and its last result."""
    times, out = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        out = work()
        times.append(time.perf_counter() - start)
    return min(times), out


def row(what: str, seconds: float, extra: str = "") -> None:
    print(f"| {what:<44} | {seconds * 1000:>9.0f} ms | {extra:<18} |")


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=120) as response:
        return len(response.read())


def browser_rows(report: Path, rounds: int) -> None:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        print("(no Playwright: browser rows skipped)")
        return
    if not CHROMIUM.exists():
        print("(no /usr/bin/chromium: browser rows skipped)")
        return
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"])
        page = chromium.new_page()

        def load() -> str:
            page.goto(report.as_uri())
            return str(page.locator("#case-count").inner_text())

        seconds, shown = best(rounds, load)
        row("Chromium: open the report, cases drawn", seconds, shown)

        def refilter() -> str:
            page.select_option("#filter-outcome", "all")
            text = str(page.locator("#case-count").inner_text())
            page.select_option("#filter-outcome", "failing")
            return text

        seconds, shown = best(rounds, refilter)
        row("Chromium: filter to every case and back", seconds, shown)
        chromium.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "results"
        root.mkdir()
        path = root / "run.json"
        path.write_text(json.dumps(results_document(args.cases)))
        print(f"{args.cases} cases × {len(CHECKS)} checks, {path.stat().st_size / 1e6:.1f} MB")
        print(f"| {'step':<44} | {'time':>12} | {'size / shown':<18} |")
        print(f"|{'-' * 46}|{'-' * 14}|{'-' * 20}|")
        seconds, source = best(args.rounds, lambda: ResultsFile(path))
        row("read and parse the results file", seconds)
        detail, cases = source.get_run("run"), source.results("run")
        seconds, html = best(args.rounds, lambda: render_report(detail, cases))
        row("render the offline report", seconds, f"{len(html) / 1e6:.1f} MB")
        report = Path(tmp) / "report.html"
        report.write_text(html)

        directory = ResultsDirectory(root)
        viewer = ViewerServer(lambda _who: directory, max_cases=1000)
        base = f"http://127.0.0.1:{viewer.serve('127.0.0.1', 0)}"
        try:
            seconds, size = best(1, lambda: get(base + "/"))
            row("served runs list, cold (parses the file)", seconds, f"{size / 1e3:.0f} kB")
            for what, path_ in [
                ("served runs list, warm", "/"),
                ("served run page, failing cases (capped)", "/runs/run"),
                ("served run page, every case (capped)", "/runs/run?outcome=all"),
                ("served compare page, run with itself", "/compare?base=run&run=run"),
            ]:
                seconds, size = best(args.rounds, lambda p=path_: get(base + p))
                row(what, seconds, f"{size / 1e3:.0f} kB")
        finally:
            viewer.close()
        browser_rows(report, args.rounds)


if __name__ == "__main__":
    main()
