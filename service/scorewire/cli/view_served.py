"""`scorewire view` without `--output`: the viewer served on this machine, in one command.

The viewer's own server (`scorewire.viewer.serving`) on 127.0.0.1 shows one of:

- the run store this machine's settings name (the default): what `scorewire run
  --record` keeps here, read through the same source as a server's viewer;
- results files: `scorewire view RESULTS.json` (with `--compare BASE.json`, both), or
  a directory of them;
- a server's recorded runs: `--server HOST:PORT` (TLS flags and `SCOREWIRE_TOKEN` as
  for `scorewire run --server`), read through its RunService, so the token sees what
  the server lets it see.

The address is printed (`--port 0` picks a free port) and opened in the browser unless
`--no-open`. No sign-in: the viewer answers only on the loopback interface and only to
requests addressed to it by a loopback name. The runs recorded here can be reviewed in
the page (pass/fail and a note per case, each form carrying its CSRF token), each review
a label in this machine's label store, shown beside the case. Ctrl-C stops it (exit 0).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
import webbrowser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scorewire.cli.common import EXIT_PASSED, EXIT_USAGE, UsageError
from scorewire.labels import LabelsUnavailable, open_label_store
from scorewire.runs import RunStore, RunsUnavailable, open_run_store
from scorewire.settings import Settings
from scorewire.viewer import InvalidResults, ResultsDirectory, ResultsFile
from scorewire.viewer.reviews import Reviews
from scorewire.viewer.serving import SourceFor, ViewerServer
from scorewire.viewer.store import store_source_for

HOST = "127.0.0.1"
DEFAULT_PORT = 7475
"""`scorewire view`'s port unless `--port` says otherwise (the server's viewer has its
own, SCOREWIRE_VIEWER_PORT)."""


def _say(text: str) -> None:
    print(f"scorewire view: {text}", file=sys.stderr, flush=True)


async def _open_store(args: argparse.Namespace, settings: Settings) -> tuple[RunStore, str]:
    """The run store to show and how to name it: a server's, or this machine's."""
    if args.server:
        import grpc
        from scorewire.cli.remote import server_target
        from scorewire.cli.view_remote import RunServiceStore

        target = server_target(args)
        assert target is not None
        if target.credentials is not None:
            channel = grpc.aio.secure_channel(target.address, target.credentials)
        else:
            channel = grpc.aio.insecure_channel(target.address)
        return RunServiceStore(channel, target.metadata), f"the runs of {target.address}"
    try:
        return await open_run_store(settings), "the runs recorded on this machine"
    except RunsUnavailable as err:
        raise UsageError(str(err)) from None


def _files(args: argparse.Namespace) -> tuple[SourceFor, str]:
    path = Path(args.results)
    try:
        if path.is_dir():
            directory = ResultsDirectory(path)
            return (lambda _who: directory), f"the results files under {path}"
        source = ResultsFile(path, *([Path(args.compare)] if args.compare else []))
    except InvalidResults as err:
        raise UsageError(str(err)) from None
    return (lambda _who: source), str(path)


async def _reviews(settings: Settings) -> Reviews:
    """Where a review of a run recorded here is written: this machine's label store."""
    try:
        labels = await open_label_store(settings)
    except LabelsUnavailable as err:
        raise UsageError(str(err)) from None
    loop = asyncio.get_running_loop()
    return Reviews(labels, loop, timeout_s=settings.viewer_request_timeout_s)


async def _serve(args: argparse.Namespace, settings: Settings) -> int:
    store: RunStore | None = None
    reviews: Reviews | None = None
    if args.results:
        source_for, what = _files(args)
    else:
        store, what = await _open_store(args, settings)
        loop = asyncio.get_running_loop()
        source_for = store_source_for(
            store, loop, lambda _who: None, timeout_s=settings.viewer_request_timeout_s
        )
        if not args.server:
            reviews = await _reviews(settings)
    viewer = ViewerServer(
        source_for,
        max_cases=settings.viewer_max_cases,
        request_timeout_s=settings.viewer_request_timeout_s,
        local_only=True,
        reviews=reviews,
    )
    try:
        try:
            port = viewer.serve(HOST, args.port)
        except OSError as err:
            raise UsageError(
                f"port {args.port} on {HOST} is not available ({err.strerror}): pick another "
                "with --port (0 picks a free one)"
            ) from None
        url = f"http://{HOST}:{port}/"
        print(url, flush=True)  # stdout: the one thing a script reads
        _say(f"serving {what} at {url} (Ctrl-C stops it)")
        if not args.no_open:
            await asyncio.to_thread(webbrowser.open, url)
        await _until_stopped()
    finally:
        await viewer.aclose()
        if store is not None:
            await store.close()
        if reviews is not None:
            await reviews.labels.close()
    return EXIT_PASSED


async def _until_stopped() -> None:
    """Wait for SIGINT or SIGTERM."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def serve_view(args: argparse.Namespace, settings_of: Callable[[], Settings | None]) -> int:
    """`scorewire view` serving the viewer; exit 0 when stopped, 2 when it cannot start."""
    if args.compare and not args.results:
        _say("--compare needs RESULTS.json: the run to compare with BASE.json")
        return EXIT_USAGE
    if args.results and args.server:
        _say("show RESULTS.json or --server's runs, not both")
        return EXIT_USAGE
    settings = settings_of()
    if settings is None:
        return EXIT_USAGE
    try:
        return asyncio.run(_serve(args, settings))
    except UsageError as problem:
        _say(problem.message)
        return EXIT_USAGE
    except KeyboardInterrupt:
        return EXIT_PASSED


def add_serving_arguments(view: Any) -> None:
    """The served viewer's options of `scorewire view`."""
    view.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"serve the viewer on this port of {HOST} (default {DEFAULT_PORT}; 0 picks a free "
        "one); without --output",
    )
    view.add_argument("--no-open", action="store_true", help="do not open the browser")
    view.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="show a scorewire server's recorded runs (the token in SCOREWIRE_TOKEN)",
    )
    view.add_argument("--tls", action="store_true", help="reach --server over TLS (system roots)")
    view.add_argument("--tls-ca", metavar="CA.pem", help="TLS, trusting this CA for --server")
    view.add_argument("--tls-cert", metavar="CERT.pem", help="client certificate (mutual TLS)")
    view.add_argument("--tls-key", metavar="KEY.pem", help="client key (mutual TLS)")
