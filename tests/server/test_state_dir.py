"""The state directory: where `scorewire serve` keeps its files, and what it says when it cannot.

The server processes here are the real `scorewire serve`, started as a user starts it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from scorewire.labels.label_model import output_hash
from scorewire.settings import Settings
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import labels_pb2_grpc

ROOT = Path(__file__).resolve().parents[2]
SCOREWIRE = str(Path(sys.executable).parent / "scorewire")


def _env(**overrides: str | None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "service"), env.get("PYTHONPATH", "")])
    env["SCOREWIRE_METRICS_ENABLED"] = "false"
    env["SCOREWIRE_PORT"] = "0"
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _fails_to_start(cwd: Path, env: dict[str, str]) -> tuple[int, str]:
    proc = subprocess.run(
        [SCOREWIRE, "serve"],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "listening" not in proc.stdout, proc.stdout
    return proc.returncode, proc.stderr


def _assert_one_line(stderr: str, *needles: str) -> None:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr  # no traceback, no log noise
    assert lines[0].startswith("scorewire serve: cannot open the label store "), lines[0]
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_an_unwritable_state_dir_is_one_line_naming_the_setting_and_exit_2(
    tmp_path: Path,
) -> None:
    # The image's case: the state directory is there but the server cannot write it
    # (a read-only mount; for a user other than root, a directory without write access).
    state = tmp_path / "state"
    state.mkdir()
    command = [SCOREWIRE, "serve"]
    if os.getuid() == 0:  # root writes through permissions: make the mount read-only
        if shutil.which("unshare") is None:
            pytest.skip("root needs unshare(1) to make a read-only mount")
        command = [
            "unshare", "--mount", "sh", "-c",
            'mount --bind -o ro "$0" "$0" && exec "$@"', str(state), *command,
        ]  # fmt: skip
    else:
        state.chmod(0o555)
    proc = subprocess.run(
        command,
        cwd=tmp_path,
        env=_env(SCOREWIRE_STATE_DIR=str(state)),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "listening" not in proc.stdout, proc.stdout
    assert proc.returncode == 2, proc.stderr
    _assert_one_line(
        proc.stderr, str(state / "labels.db"), f"uid {os.getuid()}", "SCOREWIRE_STATE_DIR"
    )


def test_a_state_dir_that_cannot_be_created_is_one_line_and_exit_2(tmp_path: Path) -> None:
    # A parent that is a file: the directory cannot be made, whoever runs the server.
    (tmp_path / "file").write_text("")
    state = tmp_path / "file" / "state"
    code, stderr = _fails_to_start(tmp_path, _env(SCOREWIRE_STATE_DIR=str(state)))
    assert code == 2, stderr
    _assert_one_line(stderr, str(state), "Not a directory", "SCOREWIRE_STATE_DIR")


def test_an_explicit_labels_path_that_cannot_be_opened_names_that_setting(
    tmp_path: Path,
) -> None:
    # SCOREWIRE_LABELS_PATH set to an absolute path: that is the setting to change.
    (tmp_path / "labels.db").mkdir()  # a directory where the file should be
    path = tmp_path / "labels.db"
    code, stderr = _fails_to_start(tmp_path, _env(SCOREWIRE_LABELS_PATH=str(path)))
    assert code == 2, stderr
    _assert_one_line(stderr, str(path), "SCOREWIRE_LABELS_PATH")
    assert "SCOREWIRE_STATE_DIR" not in stderr


def _serve_put_and_stop(cwd: Path, env: dict[str, str]) -> None:
    proc = subprocess.Popen(
        [SCOREWIRE, "serve"], cwd=cwd, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("scorewire listening on "), line
        with grpc.insecure_channel(line.rsplit(" ", 1)[1].strip()) as channel:
            stub = labels_pb2_grpc.LabelServiceStub(channel)
            label = lpb.Label(
                sample_id="s1", output_hash=output_hash("Paris"), passed=True, labeller="ana"
            )
            stub.PutLabels(lpb.PutLabelsRequest(labels=[label]), timeout=10)
            listed = stub.ListLabels(lpb.ListLabelsRequest(sample_id="s1"), timeout=10)
            assert [lb.labeller for lb in listed.labels] == ["ana"]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        proc.wait()


def test_a_default_run_writes_nothing_into_the_working_directory(tmp_path: Path) -> None:
    # No state setting at all: the store goes to $XDG_STATE_HOME/scorewire, not the cwd.
    cwd, xdg = tmp_path / "cwd", tmp_path / "xdg"
    cwd.mkdir()
    env = _env(SCOREWIRE_STATE_DIR=None, SCOREWIRE_LABELS_PATH=None, XDG_STATE_HOME=str(xdg))
    _serve_put_and_stop(cwd, env)
    assert list(cwd.iterdir()) == []
    assert (xdg / "scorewire" / "labels.db").is_file()


def test_without_xdg_state_home_the_default_is_under_the_home_directory(tmp_path: Path) -> None:
    # The XDG fallback: ~/.local/state/scorewire, created with its parents.
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    home.mkdir()
    env = _env(SCOREWIRE_STATE_DIR=None, XDG_STATE_HOME=None, HOME=str(home))
    _serve_put_and_stop(cwd, env)
    assert list(cwd.iterdir()) == []
    assert (home / ".local" / "state" / "scorewire" / "labels.db").is_file()


@pytest.mark.parametrize(
    ("state_dir", "labels_path", "xdg", "expected"),
    [
        # An explicit state directory wins over XDG_STATE_HOME.
        ("/srv/state", "labels.db", "/x", "/srv/state/labels.db"),
        # A relative labels_path is under the state directory, not the working directory.
        ("/srv/state", "sub/l.db", "", "/srv/state/sub/l.db"),
        # An absolute labels_path is used as it is.
        ("/srv/state", "/data/l.db", "", "/data/l.db"),
        # No state_dir: XDG_STATE_HOME/scorewire.
        ("", "labels.db", "/xdg", "/xdg/scorewire/labels.db"),
        # A relative XDG_STATE_HOME is ignored, as the XDG spec says: the home default.
        ("", "labels.db", "rel", "HOME/.local/state/scorewire/labels.db"),
    ],
)
def test_state_path_resolution(
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    state_dir: str,
    labels_path: str,
    xdg: str,
    expected: str,
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_STATE_HOME", xdg)
    settings = Settings(state_dir=state_dir, labels_path=labels_path)
    assert str(settings.labels_file()) == expected.replace("HOME", str(tmp_path))
    assert settings.labels_file().parent.is_relative_to(settings.state_path()) == (
        not labels_path.startswith("/")
    )


def test_a_relative_state_dir_is_made_absolute_against_the_working_directory(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # A relative SCOREWIRE_STATE_DIR is under the directory the server starts in.
    monkeypatch.chdir(tmp_path)
    assert Settings(state_dir="state").state_path() == tmp_path / "state"
