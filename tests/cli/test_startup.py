"""Start-up failures of `scorewire serve`, as a user sees them: one line, the setting, exit 2.

Each case runs the real command in a subprocess (no terminal, a clean environment, a
temporary working directory) and reads its stderr whole.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorewire.core.errors import StartupError
from scorewire.server.app import create_server
from scorewire.settings import Settings

from tests.support.pki import make_pki
from tests.support.redis import RedisServer
from tests.support.servers import (
    ROOT,
    SCOREWIRE,
    free_port,
    serve_process,
    stop_process,
)


def _env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCOREWIRE_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["SCOREWIRE_LABELS_PATH"] = str(tmp_path / "labels.db")
    env.update(settings)
    return env


def _fails_to_start(tmp_path: Path, *args: str, **settings: str) -> str:
    """Run `scorewire serve ARGS`; assert exit 2 with one stderr line, and return it."""
    done = subprocess.run(
        [SCOREWIRE, "serve", *args],
        capture_output=True,
        text=True,
        env=_env(tmp_path, **settings),
        cwd=tmp_path,
        timeout=60,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("scorewire serve: "), lines
    assert "Traceback" not in done.stderr
    assert done.stdout == ""  # never the ready line
    return lines[0]


def _log_until_serving(env: dict[str, str]) -> str:
    """A server's log up to its "serving on" line, which comes after the ready line: a
    server stopped as soon as it is ready may not have logged it yet."""
    proc, _ = serve_process(env, stderr=subprocess.PIPE)
    lines: list[str] = []
    try:
        assert proc.stderr is not None
        # blocking reads (the test's timeout bounds them): the line comes, or the pipe ends
        while not lines or ("serving on" not in lines[-1] and lines[-1]):
            lines.append(proc.stderr.readline())
    finally:
        stop_process(proc)
    assert "serving on" in lines[-1], lines
    return "".join(lines)


@pytest.fixture
def listener() -> Iterator[int]:
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def test_metrics_port_of_a_running_server_names_the_flag_and_the_setting(tmp_path: Path) -> None:
    # The first-run case: a second server started with only --port finds the metrics
    # port of the first one taken (here a free port stands for the default 9464).
    metrics_port = str(free_port())
    first, _ = serve_process(
        {
            "SCOREWIRE_METRICS_ENABLED": "true",
            "SCOREWIRE_METRICS_PORT": metrics_port,
            "SCOREWIRE_LABELS_PATH": str(tmp_path / "first.db"),
        }
    )
    try:
        line = _fails_to_start(tmp_path, "--port", "0", SCOREWIRE_METRICS_PORT=metrics_port)
    finally:
        stop_process(first)
    assert f"metrics port 127.0.0.1:{metrics_port}" in line
    assert "--metrics-port" in line and "SCOREWIRE_METRICS_PORT" in line
    assert "SCOREWIRE_METRICS_ENABLED=false" in line


def test_grpc_port_of_a_running_server_names_the_port(tmp_path: Path) -> None:
    # Two servers on one --port: the second says so instead of grpc's bind traceback.
    first, address = serve_process({"SCOREWIRE_LABELS_PATH": str(tmp_path / "first.db")})
    port = address.rsplit(":", 1)[1]
    try:
        line = _fails_to_start(tmp_path, "--port", port, SCOREWIRE_METRICS_ENABLED="false")
    finally:
        stop_process(first)
    assert f"gRPC port 127.0.0.1:{port}" in line and "SCOREWIRE_PORT" in line


@pytest.fixture
def free_then_held() -> Iterator[int]:
    """A port free a moment ago whose next port something listens on (the listener's
    port minus one was assumed free, and another test's server once held it)."""
    for _ in range(100):
        first = free_port()
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", first + 1))
            except OSError:
                continue
            sock.listen()
            yield first
            return
    pytest.fail("no free port with a bindable next port in 100 tries")


def test_metrics_port_of_a_later_worker_is_checked_too(tmp_path: Path, free_then_held: int) -> None:
    # --workers 2 serves /metrics on port and port+1: a taken port+1 stops start-up once.
    line = _fails_to_start(
        tmp_path,
        "--port",
        str(free_port()),
        "--workers",
        "2",
        "--metrics-port",
        str(free_then_held),
    )
    assert f"metrics port 127.0.0.1:{free_then_held + 1}" in line


def test_viewer_port_taken_names_the_setting(tmp_path: Path, listener: int) -> None:
    # SCOREWIRE_VIEWER_PORT held by another process: one line, before anything binds
    line = _fails_to_start(
        tmp_path,
        "--port",
        "0",
        SCOREWIRE_VIEWER_PORT=str(listener),
        SCOREWIRE_METRICS_ENABLED="false",
    )
    assert f"viewer port 127.0.0.1:{listener}" in line and "SCOREWIRE_VIEWER_PORT" in line


def test_host_and_port_in_scorewire_port_is_refused_with_where_the_host_goes(
    tmp_path: Path,
) -> None:
    # SCOREWIRE_PORT takes a number; the address has its own setting.
    line = _fails_to_start(tmp_path, SCOREWIRE_PORT="127.0.0.1:50051")
    assert "SCOREWIRE_PORT='127.0.0.1:50051' is invalid" in line
    assert "SCOREWIRE_HOST" in line


def test_an_out_of_range_flag_names_the_flag(tmp_path: Path) -> None:
    # --port 70000 passes argparse's int() and fails the setting's range.
    line = _fails_to_start(tmp_path, "--port", "70000")
    assert "--port=70000 (SCOREWIRE_PORT)" in line and "65535" in line


def test_json_setting_that_does_not_parse_names_it(tmp_path: Path) -> None:
    # pydantic-settings' own error for complex values, not its traceback.
    line = _fails_to_start(tmp_path, "--port", "0", SCOREWIRE_JUDGE_PRICES="{not json")
    assert "SCOREWIRE_JUDGE_PRICES is not valid JSON" in line


def test_unknown_log_level_is_a_setting_error(tmp_path: Path) -> None:
    # Before: logging.basicConfig's ValueError traceback.
    line = _fails_to_start(tmp_path, "--port", "0", SCOREWIRE_LOG_LEVEL="loud")
    assert "SCOREWIRE_LOG_LEVEL='loud'" in line and "WARNING" in line


def test_a_secret_setting_error_never_shows_the_value(tmp_path: Path) -> None:
    # A labels URL with a password in the wrong scheme: named, its value not repeated.
    line = _fails_to_start(
        tmp_path, "--port", "0", SCOREWIRE_LABELS_URL="mysql://u:hunter2@db/labels"
    )
    assert "SCOREWIRE_LABELS_URL" in line and "hunter2" not in line


def test_missing_tls_file_names_the_setting(tmp_path: Path) -> None:
    # Before: FileNotFoundError from deep in server_credentials.
    missing = str(tmp_path / "nope.pem")
    line = _fails_to_start(
        tmp_path, "--port", "0", SCOREWIRE_TLS_CERT=missing, SCOREWIRE_TLS_KEY=missing
    )
    assert f"SCOREWIRE_TLS_CERT={missing!r} cannot be read" in line


def test_a_file_that_is_not_pem_names_the_setting(tmp_path: Path) -> None:
    # Before: three lines of grpc core errors and "Failed to bind to address".
    pki = make_pki(tmp_path)
    junk = tmp_path / "key.txt"
    junk.write_text("not a key\n")
    line = _fails_to_start(
        tmp_path,
        "--port",
        "0",
        SCOREWIRE_TLS_CERT=str(pki["srv_cert_path"]),
        SCOREWIRE_TLS_KEY=str(junk),
    )
    assert "SCOREWIRE_TLS_KEY=" in line and "not a PEM file" in line


def test_a_key_of_another_certificate_names_both_files(tmp_path: Path) -> None:
    # Both files are PEM but do not belong together.
    pki = make_pki(tmp_path)
    line = _fails_to_start(
        tmp_path,
        "--port",
        "0",
        SCOREWIRE_TLS_CERT=str(pki["srv_cert_path"]),
        SCOREWIRE_TLS_KEY=str(pki["cli_key_path"]),
    )
    assert "SCOREWIRE_TLS_CERT=" in line and "SCOREWIRE_TLS_KEY=" in line


def test_a_custom_check_module_that_does_not_import_names_the_setting(tmp_path: Path) -> None:
    # --imports of a module that does not exist.
    line = _fails_to_start(
        tmp_path, "--port", "0", "--imports", "no_such_module", SCOREWIRE_METRICS_ENABLED="false"
    )
    assert "SCOREWIRE_IMPORTS" in line and "no_such_module" in line


async def test_create_server_on_a_taken_port_raises_a_startup_error(listener: int) -> None:
    # The port taken between serve's check and the bind: the same one-line error.
    with pytest.raises(StartupError, match=f"gRPC port 127.0.0.1:{listener}"):
        await create_server(Settings(host="127.0.0.1", port=listener, metrics_enabled=False))


def test_an_unknown_scorewire_variable_is_warned_about_with_the_nearest_setting(
    tmp_path: Path,
) -> None:
    # A typo used to be ignored without a word; a name scorewire's own tools read
    # (the CLI's token) is no mistake and stays quiet.
    env = {
        "SCOREWIRE_PROT": "1",
        "SCOREWIRE_TOKEN": "not-a-setting-but-ours",
        "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
    }
    log = _log_until_serving(env)
    assert (
        "SCOREWIRE_PROT is not a scorewire setting (did you mean SCOREWIRE_PORT?): it is ignored"
        in log
    ), log
    assert "SCOREWIRE_TOKEN" not in log


def test_version_prints_the_installed_version(tmp_path: Path) -> None:
    from importlib.metadata import version

    done = subprocess.run(
        [SCOREWIRE, "--version"], capture_output=True, text=True, env=_env(tmp_path), timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"scorewire {version('scorewire')}"


def test_a_reader_that_goes_away_ends_the_command_without_a_traceback(tmp_path: Path) -> None:
    # `scorewire checks --json | head`: the pipe closes before the command writes.
    proc = subprocess.Popen(
        [SCOREWIRE, "checks", "--json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(tmp_path),
        cwd=tmp_path,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(60) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_the_serving_line_says_what_the_server_chose_and_no_secret(tmp_path: Path) -> None:
    # One log line for the operator: workers, memory bounds, stores, TLS and tokens.
    pki = make_pki(tmp_path)
    env = {
        "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
        "SCOREWIRE_SCORING_WORKERS": "3",
        "SCOREWIRE_MAX_BYTES_IN_FLIGHT": str(64 * 1024 * 1024),
        "SCOREWIRE_CACHE_URL": f"redis://:hunter2@127.0.0.1:{free_port()}/0",
        "SCOREWIRE_AUTH_TOKENS": json.dumps(
            [
                {"name": n, "sha256": hashlib.sha256(n.encode()).hexdigest(), "role": "caller"}
                for n in ("alpha", "beta")
            ]
        ),
        "SCOREWIRE_TLS_CERT": str(pki["srv_cert_path"]),
        "SCOREWIRE_TLS_KEY": str(pki["srv_key_path"]),
    }
    log = _log_until_serving(env)
    line = next(x for x in log.splitlines() if "serving on" in x)
    assert "scoring workers 3 per process" in line, line
    assert "requests in flight at most 64 MiB" in line, line
    assert f"labels sqlite {tmp_path / 'labels.db'}" in line, line
    assert "observe queue sqlite:" in line and "observe.db" in line, line
    assert "verdict cache redis://127.0.0.1:" in line and "hunter2" not in log, line
    assert "TLS on;" in line and "tokens 2;" in line, line
    # nothing listens on the cache's port: said at start-up, not found out per call
    assert "the verdict cache at redis://127.0.0.1:" in log and "does not answer" in log, log


def test_a_cache_that_answers_is_not_warned_about(tmp_path: Path) -> None:
    with RedisServer() as redis:
        env = {
            "SCOREWIRE_LABELS_PATH": str(tmp_path / "labels.db"),
            "SCOREWIRE_CACHE_URL": redis.url,
        }
        log = _log_until_serving(env)
    assert f"verdict cache {redis.url}" in log and "does not answer" not in log, log
