"""`scorewire run`, `scorewire validate` and `scorewire checks`.

`scorewire run SUITE` reads a suite file in either format — checkllm (it has `tests:`
or `prompts:`) or evalstone (`checks:`/`suites:`) — produces the outputs its target
needs (provider calls, an HTTP application, or recorded outputs), scores them and
prints a table with one row per assertion, the prompt × provider matrix (checkllm), the
failing cases with their reasons (`scorewire.cli.console`) and the totals. In process
by default; with `--server HOST:PORT` the scoring happens on a scorewire server through
RunSuite, while outputs are still produced here (provider credentials stay on this
machine) and sent as recorded outputs.

Exit codes:

| code | meaning |
|---|---|
| 0 | the run finished and its gate passed |
| 1 | the run finished and its gate failed |
| 2 | a bad suite or bad arguments, or the run could not start: the preflight found a |
|   | judge or provider without backend, credentials or price (nothing was called), the |
|   | server is unreachable, or the server refused the suite |
| 130 | interrupted (Ctrl-C) |

Ctrl-C (SIGINT) cancels every provider and judge call in flight (and the RunSuite call
on a server), then still prints the summary of the cases that finished and writes
`--output`/`--junit` with them (`"interrupted": true`, and a gate that does not pass:
a partial run is no verdict); the exit code is 130. A second Ctrl-C quits at once
without writing anything.

With `--server`, the suite goes to the server as it is (evalstone: the YAML without
`imports`, `datasets` and targets; checkllm: each test's assertions as check specs),
the cases in RunSuite calls of at most 2,000; the gate is evaluated here over every
case, including those whose output could not be produced. The server's judge grades
(a checkllm `judge: {backend: gemini}` then means the server's OpenAI-compatible judge
backend, which must point at Gemini), and its verdict-cache savings are not shown.

`--baseline RUN_OR_results.json` (or the suite's `gate.baseline`, a results file beside
the suite or a run id or name) fails the gate, exit 1, when a case that passed a check
in that earlier run fails or errors it now, or a check's pass rate drops by more than
`gate.max_regression` (`scorewire.cli.baseline`). `--record` keeps the run in the run
store (`--run-name`, `--label key=value`), where a later `--baseline NAME` finds it:
this machine's, or with `--server` the server's, where the run is recorded as one run
however many calls it took (`scorewire.cli.server_run`).

Environment: the `SCOREWIRE_*` settings (judge, embeddings, provider keys and base
URLs; `scorewire.settings.Settings`) plus the SDKs' own `OPENAI_API_KEY`,
`ANTHROPIC_API_KEY`, `GEMINI_API_KEY`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from scorewire.cli import checks, init, validate
from scorewire.cli.baseline import judge_against, load_baseline
from scorewire.cli.common import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_PASSED,
    EXIT_USAGE,
    UsageError,
    load_settings,
    print_problems,
)
from scorewire.cli.console import (
    DEFAULT_SHOW_FAILURES,
    print_assertions,
    print_failures,
    print_matrix,
)
from scorewire.cli.loading import RunSpec, load_run
from scorewire.cli.local import Collector, open_resources, run_in_process
from scorewire.cli.preflight_report import as_violations, preflight_run
from scorewire.cli.record import parse_labels, record_report
from scorewire.cli.remote import ServerTarget, run_on_server, server_target
from scorewire.cli.run_output import (
    RunProgress,
    RunReport,
    print_totals,
    stderr_console,
    stdout_console,
    write_junit,
    write_results,
)
from scorewire.cli.selection import apply_options
from scorewire.cli.server_run import ServerRun
from scorewire.core.errors import SpecError
from scorewire.runs import RunOutcomes, utc_now
from scorewire.settings import Settings


async def execute(
    spec: RunSpec,
    settings: Settings,
    *,
    server: ServerTarget | str | None,
    budget_limit: float | None,
    progress_console: Console,
    server_run: ServerRun | None = None,
) -> RunReport:
    """Run the suite; on SIGINT stop every call and report what finished."""
    started = utc_now()
    res = open_resources(spec, settings, budget_limit, local_scoring=server is None)
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    interrupted = False

    def on_sigint() -> None:
        nonlocal interrupted
        if interrupted:
            raise KeyboardInterrupt  # a second Ctrl-C: quit now, without writing files
        if task is not None:
            interrupted = True
            task.cancel()

    installed = False
    with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
        loop.add_signal_handler(signal.SIGINT, on_sigint)
        installed = True
    with RunProgress(console=progress_console) as progress:
        collector = Collector(spec, progress)
        try:
            if server is None:
                progress.phase("scoring", spec.planned)
                await run_in_process(spec, res, collector)
            else:
                await run_on_server(
                    spec, res, collector, server, progress, budget_limit, server_run
                )
        except asyncio.CancelledError:
            if not interrupted or task is None:
                raise
            task.uncancel()
        finally:
            stats = res.generator.stats
            collector.generation_cost_usd = stats.cost_usd
            collector.cached_generations = stats.cached
            collector.saved_usd = stats.saved_usd + (
                res.judge.stats.saved_usd if res.judge is not None else 0.0
            )
            await res.aclose()
    if installed:
        loop.remove_signal_handler(signal.SIGINT)
    report = collector.report(interrupted=interrupted, budget=budget_limit)
    report.started_at, report.ended_at = started, utc_now()
    if interrupted:
        # A partial run is no verdict: its gate never passes (the exit code is 130 anyway).
        report.summary.gate_passed = False
        report.summary.gate_reasons.insert(
            0, f"the run was interrupted after {report.summary.cases} of {spec.planned} cases"
        )
    if server is not None:
        where = server.address if isinstance(server, ServerTarget) else server
        report.notes.append(f"scored on {where}; judge savings on the server are not shown")
    return report


# ---- the command ---------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    """`scorewire run SUITE`."""
    err = stderr_console()
    out = stdout_console()
    if args.budget is not None and args.budget < 0:
        err.print("--budget must be ≥ 0", markup=False)
        return EXIT_USAGE
    if args.show_failures < 0:
        err.print("--show-failures must be ≥ 0", markup=False)
        return EXIT_USAGE
    settings = load_settings(err)
    if settings is None:
        return EXIT_USAGE
    try:
        spec = load_run(args.suite, args.suite_name, settings)
        notes = apply_options(
            spec,
            filter_text=args.filter,
            repeat=args.repeat,
            max_concurrency=args.max_concurrency,
            no_cache=args.no_cache,
            fresh_judges=args.fresh_judges,
        )
    except SpecError as problem:
        print_problems(err, f"{args.suite}: invalid suite", problem.violations)
        return EXIT_USAGE
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    budget = args.budget if args.budget is not None else spec.budget
    try:
        target = server_target(args)
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    problems = asyncio.run(
        preflight_run(spec, settings, local_scoring=target is None, budgeted=budget is not None)
    )
    if problems:
        # Nothing has been called: the suite cannot run here as configured.
        print_problems(
            err,
            f"{args.suite}: cannot run here ({len(problems)} problems)",
            as_violations(problems),
        )
        return EXIT_USAGE
    baseline_ref = args.baseline or _beside(args.suite, spec.gate.baseline)
    try:
        labels = parse_labels(args.label, settings)
        baseline = _baseline(baseline_ref, settings, target)
    except UsageError as problem:
        err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    server_run = None
    if target is not None:
        server_run = ServerRun(
            target,
            bool(args.record),
            args.run_name or spec.name or Path(args.suite).stem,
            labels,
            _suite_file(args.suite),
            spec_check_names(spec),
        )
    try:
        report = asyncio.run(
            execute(
                spec,
                settings,
                server=target,
                budget_limit=budget,
                progress_console=err,
                server_run=server_run,
            )
        )
    except KeyboardInterrupt:
        err.print("interrupted before any result could be reported", markup=False)
        return EXIT_INTERRUPTED
    except UsageError as problem:
        if server_run is not None and server_run.opened:
            with contextlib.suppress(UsageError):
                asyncio.run(server_run.close(None))  # recorded incomplete
        if problem.violations:
            print_problems(err, problem.message, problem.violations)
        else:
            err.print(problem.message, markup=False, highlight=False)
        return EXIT_USAGE
    if target is not None and spec.fresh:
        notes = [
            "caches off for the provider calls made here; the server's verdict cache still "
            "answers its judge calls"
            + ("" if spec.fresh_judges else " (--fresh-judges asks its judges again)")
        ]
        if spec.fresh_judges:
            notes.append("the server's judges asked again: it read no verdict cached before")
    report.notes.extend(notes)
    if baseline is not None and not report.interrupted:
        judge_against(
            report,
            baseline[0],
            baseline[1],
            spec.gate.max_regression,
            drift_limit=settings.judge_watch.drift_limit,
        )
    closing: UsageError | None = None
    if server_run is not None:
        try:  # the run ends on the server with the verdict printed here
            run_id = asyncio.run(server_run.close(report))
        except UsageError as problem:
            if args.record:
                closing = problem  # reported below: the run is not recorded as it ended
            else:  # the verdict here stands; only the server's count of it is missing
                err.print(f"warning: {problem.message}", markup=False, highlight=False)
    if not args.no_table:
        print_assertions(out, report)
        print_matrix(out, report)
    print_failures(out, report, args.show_failures)
    print_totals(out, report)
    try:
        if closing is not None:
            raise closing
        if args.record and server_run is not None:
            where = server_run.target.address
            err.print(f"recorded as run {run_id} on {where}", markup=False, highlight=False)
        elif args.record:
            suite = _suite_file(args.suite)
            name = args.run_name or spec.name or Path(args.suite).stem
            run_id = asyncio.run(
                record_report(report, settings, name=name, labels=labels, suite=suite)
            )
            err.print(f"recorded as run {run_id}", markup=False, highlight=False)
    except (UsageError, OSError) as problem:
        text = problem.message if isinstance(problem, UsageError) else str(problem)
        err.print(f"cannot record the run: {text}", markup=False, highlight=False)
        return EXIT_USAGE
    try:
        if args.output:
            write_results(args.output, report)
        if args.junit:
            write_junit(args.junit, report)
    except OSError as problem:
        err.print(f"cannot write results: {problem}", markup=False, highlight=False)
        return EXIT_USAGE
    if report.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_PASSED if report.summary.gate_passed else EXIT_FAILED


def _suite_file(path: str) -> str:
    """The suite file's text, as the recorded run keeps it."""
    return Path(path).read_text(encoding="utf-8", errors="replace")


def spec_check_names(spec: RunSpec) -> list[str]:
    """Every check name of the run's groups, in order of first appearance."""
    names: list[str] = []
    for g in spec.groups:
        names.extend(n for n in g.plan.names if n not in names)
    return names


def _beside(suite: str, ref: str | None) -> str | None:
    """A suite's `gate.baseline`: a results file beside the suite when one is there."""
    if ref and (Path(suite).parent / ref).is_file():
        return str(Path(suite).parent / ref)
    return ref


def _baseline(
    ref: str | None, settings: Settings, target: ServerTarget | None
) -> tuple[str, RunOutcomes] | None:
    """The baseline run's label and outcomes, loaded before the run spends anything."""
    if not ref:
        return None
    return asyncio.run(load_baseline(ref, settings, target))


def add_parser(subparsers: Any) -> None:
    """Add `run` to the `scorewire` parser's subparsers."""
    run = subparsers.add_parser(
        "run",
        help="run a suite file (checkllm or evalstone format) and gate on it",
        description="Run a suite: produce the outputs (providers, an HTTP target, or "
        "recorded), score them, print a summary. Exit 0 when the gate passes, 1 when it "
        "fails, 2 for a bad suite or arguments or a suite that cannot run here (a judge or "
        "provider without credentials or price: nothing is called), 130 when interrupted.",
    )
    run.add_argument("suite", metavar="SUITE", help="a suite YAML file")
    run.add_argument(
        "--server", metavar="HOST:PORT", help="score on this scorewire server (default: here)"
    )
    run.add_argument("--suite", dest="suite_name", metavar="NAME", help="which suite of the file")
    run.add_argument("--tls", action="store_true", help="reach --server over TLS (system roots)")
    run.add_argument("--tls-ca", metavar="CA.pem", help="TLS, trusting this CA for --server")
    run.add_argument("--tls-cert", metavar="CERT.pem", help="client certificate (mutual TLS)")
    run.add_argument("--tls-key", metavar="KEY.pem", help="client key (mutual TLS)")
    run.add_argument(
        "--budget", type=float, metavar="USD", help="most dollars to spend (overrides the file)"
    )
    run.add_argument(
        "--output",
        metavar="RESULTS.json|RESULTS.csv|REPORT.html",
        help="write every result: CSV (one row per score) when the name ends in .csv, the "
        "HTML report of `scorewire view` when it ends in .html, else JSON",
    )
    run.add_argument("--junit", metavar="RESULTS.xml", help="write JUnit XML for CI systems")
    run.add_argument(
        "--show-failures",
        type=int,
        default=DEFAULT_SHOW_FAILURES,
        metavar="N",
        help=f"list the first N failing cases with their reasons (default {DEFAULT_SHOW_FAILURES};"
        " 0 lists none)",
    )
    run.add_argument(
        "--no-table",
        action="store_true",
        help="print no table of assertions and no prompt x provider matrix (long runs): "
        "the failing cases and the totals only",
    )
    run.add_argument(
        "--filter",
        metavar="TEXT",
        help="run only the tests whose description contains TEXT, or the tests (evalstone: "
        "cases) at these indices: 3, 0,2, 1-4",
    )
    run.add_argument(
        "--repeat", type=int, default=1, metavar="N", help="run every case N times (caches off)"
    )
    run.add_argument(
        "--no-cache",
        action="store_true",
        help="make every provider and judge call, reading and writing no cache",
    )
    run.add_argument(
        "--fresh-judges",
        action="store_true",
        help="ask the judges again: read no verdict cached before the run began (here or, "
        "with --server, on the server), store the new ones; judge calls are charged to "
        "--budget as usual (the suite's settings.fresh_judges does the same)",
    )
    run.add_argument(
        "--max-concurrency",
        type=int,
        metavar="N",
        help="most cases in flight at once (overrides the file's concurrency)",
    )
    run.add_argument(
        "--baseline",
        metavar="RUN_OR_RESULTS.json",
        help="fail the gate when a case that passed in this earlier run (a results file, or "
        "a recorded run's id or name) fails now; overrides the suite's gate.baseline",
    )
    run.add_argument(
        "--record",
        action="store_true",
        help="keep the run in the run store (SCOREWIRE_RUNS_URL, else the state directory)",
    )
    run.add_argument("--run-name", metavar="NAME", help="the recorded run's name (--record)")
    run.add_argument(
        "--label",
        action="append",
        metavar="KEY=VALUE",
        help="a label of the recorded run, such as git_sha=... (--record; repeatable)",
    )
    run.set_defaults(func=cmd_run)


def add_run_parsers(subparsers: Any) -> None:
    """Add `run`, `validate`, `checks` and `init` to the `scorewire` parser's subparsers."""
    add_parser(subparsers)
    validate.add_parser(subparsers)
    checks.add_parser(subparsers)
    init.add_parser(subparsers)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m scorewire.cli.run run|validate|checks|init ...`: these commands alone."""
    parser = argparse.ArgumentParser(prog="scorewire")
    add_run_parsers(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
