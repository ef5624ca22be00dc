"""The server's logging: one format, secrets scrubbed, client libraries kept quiet.

The HTTP clients under the judge SDKs log every request at INFO (`httpx2: HTTP Request:
POST ...`): at the server's default INFO level that was one line per judge call, a
formatted record and a write on the event loop for each of thousands of calls a minute,
saying nothing the metrics do not. Those libraries log at WARNING and above unless the
server's level is DEBUG.
"""

from __future__ import annotations

import logging

from scorewire.core.secrets import install_log_scrubbing

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

CHATTY = ("httpx", "httpx2", "httpcore", "openai", "anthropic", "aiohttp.access")
"""Loggers that report each request at INFO."""


def configure_logging(level: str) -> None:
    """Log at `level` to stderr, scrub secrets, and quiet the per-request loggers."""
    logging.basicConfig(level=level, format=FORMAT)
    install_log_scrubbing()
    quiet = logging.DEBUG if level == "DEBUG" else logging.WARNING
    for name in CHATTY:
        logging.getLogger(name).setLevel(quiet)
