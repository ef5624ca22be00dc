"""The `scorewire` command: serve, run, validate, checks, init, label, view, agreement,
calibrate."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import Any

from scorewire.cli.agreement import add_agreement_parsers
from scorewire.cli.label import add_label_parser
from scorewire.cli.run import add_run_parsers
from scorewire.cli.startup import check_ports, load_settings, setting_name, unknown_settings
from scorewire.cli.view import add_view_parser
from scorewire.core.errors import SpecError, StartupError
from scorewire.core.logs import configure_logging
from scorewire.settings import Settings


def _serve(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {}
    for key in ("host", "port", "workers", "metrics_port"):
        value = getattr(args, key)
        if value is not None:
            overrides[key] = value
    if args.imports:
        overrides["imports"] = [m for chunk in args.imports for m in chunk.split(",") if m]
    try:
        return _serve_with(load_settings(overrides))
    except StartupError as err:
        # A first-run mistake (a taken port, a setting in the wrong form): one line, no
        # traceback, naming the setting and the fix.
        print(f"scorewire serve: {err}", file=sys.stderr)
        return 2


def _serve_with(settings: Settings) -> int:
    from scorewire.core.memory import return_large_buffers

    return_large_buffers()  # before the first big request, and inherited by every child
    configure_logging(settings.log_level)
    from scorewire.core.cgroup import read_limits
    from scorewire.scoring.sizing import fit

    settings = fit(settings, read_limits())  # workers and memory bounds the cgroup allows
    for line in unknown_settings(os.environ):
        logging.getLogger("scorewire.server").warning(line)
    from scorewire.server.app import run_workers, serve
    from scorewire.server.security import principals_from_settings, server_credentials

    try:
        principals_from_settings(settings)  # a bad token setting stops here, not per worker
    except ValueError as err:
        raise StartupError(str(err)) from None
    server_credentials(settings)  # a bad TLS file too
    check_ports(settings)

    if settings.workers > 1:
        return run_workers(settings)
    # The signal handler normally wins; a KeyboardInterrupt before it is installed is quiet.
    try:
        with contextlib.suppress(KeyboardInterrupt):
            asyncio.run(serve(settings))
    except SpecError as err:  # a custom-check module that does not import
        raise StartupError(f"{setting_name('imports', {})} (--imports): {err}") from None
    return 0


def _version() -> str:
    """The installed package's version (`unknown` when run from a source tree alone)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("scorewire")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of every subcommand."""
    parser = argparse.ArgumentParser(
        prog="scorewire",
        description="Score the outputs of LLM applications: a gRPC service and its tools.",
    )
    parser.add_argument("--version", action="version", version=f"scorewire {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    serve = sub.add_parser(
        "serve",
        help="run the gRPC server",
        description="Run the scorewire gRPC server. Every option can also be set with a "
        "SCOREWIRE_* environment variable (SCOREWIRE_HOST, SCOREWIRE_PORT, ...).",
    )
    serve.add_argument("--host", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to bind; 0 picks one (default 50051)")
    serve.add_argument("--workers", type=int, help="server processes sharing the port")
    serve.add_argument(
        "--metrics-port",
        type=int,
        dest="metrics_port",
        help="Prometheus /metrics port (default 9464)",
    )
    serve.add_argument(
        "--imports",
        action="append",
        metavar="MODULE[,MODULE]",
        help="modules of server-side custom checks to import (repeatable)",
    )
    serve.set_defaults(func=_serve)
    add_label_parser(sub)
    add_run_parsers(sub)
    add_view_parser(sub)
    add_agreement_parsers(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `scorewire` command."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from scorewire.core.sdk_urls import unset_empty_sdk_urls

    unset_empty_sdk_urls()  # `OPENAI_BASE_URL=` means the SDK's default, as ours do
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        result: int = args.func(args)
        sys.stdout.flush()  # here, so a reader that went away is met inside the try
    except BrokenPipeError:
        # `scorewire checks --json | head`: the reader has what it wanted. No traceback,
        # and nothing more written to the closed pipe when the interpreter exits.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a command the pipe ended
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
