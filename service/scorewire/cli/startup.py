"""Start-up checks of `scorewire serve`: every failure one line naming the setting and the fix.

A user's first run meets these: a port another server holds, a setting in the wrong
form, a TLS file that is missing or not PEM. Each becomes a `StartupError` whose message
names the `SCOREWIRE_*` variable (and the flag, when there is one) and what to do.
"""

from __future__ import annotations

import difflib
import socket
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr, ValidationError
from pydantic_settings import SettingsError
from scorewire.core.errors import StartupError
from scorewire.settings import Settings
from scorewire.viewer.serving import VIEWER_PORT_FIX

FLAGS = {
    "host": "--host",
    "port": "--port",
    "workers": "--workers",
    "metrics_port": "--metrics-port",
    "imports": "--imports",
}
"""The `scorewire serve` flag of each setting that has one."""

HINTS = {
    "port": "give a number 0-65535 (0 picks a free port); the address goes in SCOREWIRE_HOST",
    "metrics_port": "give a number 0-65535 (0 picks a free port)",
    "workers": "give a number of processes, 1-64",
}
"""What to write instead, for settings whose pydantic message alone does not say."""

# Values of these settings may carry secrets (a pasted token, a URL with a password):
# their errors never repeat the value.
_SECRET = {"auth_tokens", "auth_token_sha256"} | {
    name
    for name, field in Settings.model_fields.items()
    if field.annotation is not None and SecretStr in getattr(field.annotation, "__args__", ())
}


def env_name(field: str) -> str:
    """The environment variable of a settings field (`metrics_port` -> SCOREWIRE_METRICS_PORT)."""
    return "SCOREWIRE_" + field.upper()


def setting_name(field: str, overrides: dict[str, Any]) -> str:
    """How the user set `field`: its flag when given on the command line, else its variable."""
    if field in overrides and field in FLAGS:
        return f"{FLAGS[field]} ({env_name(field)})"
    return env_name(field)


NOT_SETTINGS = frozenset(
    {
        "SCOREWIRE_ADDR",  # the clients' tests: the server to call
        "SCOREWIRE_ADDRESS",  # the clients' hello programs: the server to call
        "SCOREWIRE_BIN",  # the clients' tests: the scorewire command to start
        "SCOREWIRE_BUILD_NATIVE",  # a wheel build: the native kernel (hatch_build.py)
        "SCOREWIRE_IMAGE_CACHE",  # make test-image's base image cache
        "SCOREWIRE_POSTGRES_PASSWORD",  # deploy/compose.yaml's database password
        "SCOREWIRE_TOKEN",  # the CLI's token for --server
        "SCOREWIRE_TRACE_IDS",  # the Go client's trace test
        "SCOREWIRE_WHEELHOUSE",  # make test-install's wheels
    }
)
"""`SCOREWIRE_*` names that scorewire's own tools read and the server does not: not
mistakes, so never warned about."""


def unknown_settings(environ: Mapping[str, str]) -> list[str]:
    """A warning for each `SCOREWIRE_*` variable that is no setting (a typo such as
    SCOREWIRE_PROT is otherwise ignored without a word), with the nearest setting's name."""
    known = sorted(env_name(field) for field in Settings.model_fields)
    known_set = set(known)
    lines = []
    for name in sorted(environ):
        upper = name.upper()  # pydantic-settings reads the names case-insensitively
        if not upper.startswith("SCOREWIRE_") or upper in known_set or upper in NOT_SETTINGS:
            continue
        if "__" in upper and upper.split("__", 1)[0] in known_set:  # a nested field
            continue
        near = difflib.get_close_matches(upper, known, n=1, cutoff=0.8)
        hint = f" (did you mean {near[0]}?)" if near else ""
        lines.append(f"{name} is not a scorewire setting{hint}: it is ignored")
    return lines


def load_settings(overrides: dict[str, Any]) -> Settings:
    """The settings from the environment and `overrides`, or a one-line StartupError."""
    try:
        return Settings(**overrides)
    except ValidationError as err:
        raise StartupError(describe_validation_error(err, overrides)) from None
    except SettingsError as err:
        # pydantic-settings: a complex setting (JSON) that does not parse.
        field = str(err).split('"')[1] if str(err).count('"') >= 2 else ""
        name = env_name(field) if field else "a SCOREWIRE_* setting"
        raise StartupError(f"{name} is not valid JSON: give it as JSON, see the README") from None


def describe_validation_error(err: ValidationError, overrides: dict[str, Any]) -> str:
    """One line for pydantic's errors: the first setting, what is wrong, what to do."""
    errors = err.errors()
    first = errors[0]
    field = str(first["loc"][0]) if first["loc"] else ""
    message = str(first["msg"]).removeprefix("Value error, ")
    shown = "" if field in _SECRET else f"={first.get('input')!r}"
    if not field:
        name = "a SCOREWIRE_* setting"
    elif field in overrides and field in FLAGS:
        name = f"{FLAGS[field]}{shown} ({env_name(field)})"
    else:
        name = f"{env_name(field)}{shown}"
    line = f"{name} is invalid: {message}"
    if field in HINTS:
        line += f"; {HINTS[field]}"
    if len(errors) > 1:
        line += f" (and {len(errors) - 1} more invalid setting(s))"
    return line


def check_port_free(host: str, port: int, what: str, fix: str) -> None:
    """Refuse `port` on `host` when something already listens there (port 0 is always free).

    Checked before grpc binds, because grpc's core logs its own lines for a failed bind;
    a port taken between this check and the bind still fails, with the same message.
    """
    if port == 0:
        return
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as err:
        raise StartupError(
            f"SCOREWIRE_HOST={host!r} does not resolve ({err.strerror}): "
            "give an IP address or a host name of this machine"
        ) from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as sock:
        # As the servers bind: SO_REUSEADDR, so a port in TIME_WAIT is not "taken".
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(address)
        except OSError as err:
            raise StartupError(port_taken_message(host, port, what, fix, err)) from None


def port_taken_message(host: str, port: int, what: str, fix: str, err: OSError | None) -> str:
    """The one line for a port that cannot be bound."""
    reason = err.strerror if err is not None and err.strerror else "it cannot be bound"
    return f"the {what} {host}:{port} is not available ({reason}): {fix}"


GRPC_PORT_FIX = "another server may hold it; pick another with --port or SCOREWIRE_PORT"
METRICS_PORT_FIX = (
    "another server may hold it; pick another with --metrics-port or SCOREWIRE_METRICS_PORT "
    "(0 picks a free one), or turn metrics off with SCOREWIRE_METRICS_ENABLED=false"
)


def check_ports(settings: Settings) -> None:
    """Refuse to start when the gRPC port, the viewer's or a worker's metrics port is
    already taken."""
    check_port_free(settings.host, settings.port, "gRPC port", GRPC_PORT_FIX)
    if settings.viewer_port:
        check_port_free(settings.viewer_host, settings.viewer_port, "viewer port", VIEWER_PORT_FIX)
    if settings.metrics_enabled and settings.metrics_port:
        for worker in range(settings.workers):
            port = settings.metrics_port + worker
            check_port_free(settings.host, port, "metrics port", METRICS_PORT_FIX)
