"""The server image, built from deploy/Dockerfile and run as the image declares it.

No Docker engine runs on the machines these tests run on and no registry is reachable,
so `scripts/build_test_image.sh` builds the Dockerfile with buildah on a local Debian base
(mmdebstrap), and `ImageContainer` runs the image's ENTRYPOINT + CMD with `buildah run
--isolation chroot` on the host's network: as the image's USER with no capabilities,
with the image's ENV, on a read-only root, and a host directory as the state VOLUME.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
IMAGE = "localhost/scorewire:test"
TOOLS = {"buildah": "buildah", "mmdebstrap": "mmdebstrap", "setpriv": "util-linux"}


def require_tools() -> None:
    """Skip (on a workstation) or fail (under CI) when a build or run tool is missing."""
    missing = [f"{tool} (package {pkg})" for tool, pkg in TOOLS.items() if not shutil.which(tool)]
    if not missing:
        return
    message = "not installed: " + ", ".join(missing)
    if os.environ.get("CI"):
        pytest.fail(message + "; scripts/install_test_deps.sh must install them under CI")
    pytest.skip(message + " (scripts/install_test_deps.sh installs them as root)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True, slots=True)
class ImageConfig:
    """What the image declares about how it runs (its OCI config)."""

    user: str
    env: dict[str, str]
    command: list[str]
    volumes: list[str]


def image_config(image: str) -> ImageConfig:
    out = subprocess.run(
        ["buildah", "inspect", "--type", "image", image],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout
    config: dict[str, Any] = json.loads(out)["OCIv1"]["config"]
    env = dict(item.split("=", 1) for item in config.get("Env", []))
    return ImageConfig(
        user=config["User"],
        env=env,
        command=[*config.get("Entrypoint", []), *config.get("Cmd", [])],
        volumes=sorted(config.get("Volumes", {})),
    )


@pytest.fixture(scope="session")
def image() -> str:
    """Build (or reuse the cached layers of) the image; its name."""
    if os.geteuid() != 0 and not os.environ.get("CI"):
        pytest.skip("building and running images with buildah here needs root")
    require_tools()
    started = time.monotonic()
    proc = subprocess.run(
        [str(ROOT / "scripts" / "build_test_image.sh"), IMAGE],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    print(f"\nimage {IMAGE} built in {time.monotonic() - started:.1f} s")
    return proc.stdout.strip().splitlines()[-1]


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


@dataclass
class ImageContainer:
    """One run of the image's command in a buildah working container."""

    image: str
    state: Path | None
    env: dict[str, str] = field(default_factory=dict)
    name: str = field(default_factory=lambda: f"scorewire-test-{uuid.uuid4().hex[:8]}")
    proc: subprocess.Popen[str] | None = None

    def start(self) -> ImageContainer:
        config = image_config(self.image)
        subprocess.run(
            ["buildah", "from", "--pull-never", "--name", self.name, self.image],
            capture_output=True,
            check=True,
            timeout=120,
        )
        uid, _, gid = config.user.partition(":")
        args = ["buildah", "run", "--isolation", "chroot", "--network", "host"]
        if self.state is not None:
            (volume,) = config.volumes
            args += ["-v", f"{self.state}:{volume}"]
        for key, value in self.env.items():
            args += ["-e", f"{key}={value}"]
        # buildah run cannot make the root read-only itself (it writes mount points into
        # it), so a root shell remounts it read-only in the container's mount namespace,
        # then becomes the image's USER with no capabilities and execs the image's command.
        args += ["--user", "0:0", "--cap-add", "CAP_SYS_ADMIN", self.name, "--"]
        args += [
            "sh",
            "-c",
            'mount -o remount,bind,ro / && u=$0 g=$1 && shift && exec setpriv --reuid "$u"'
            ' --regid "$g" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs'
            ' -- "$@"',
            uid,
            gid or uid,
            *config.command,
        ]
        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return self

    def ready_address(self) -> str:
        """Wait for the ready line; the address it names."""
        assert self.proc is not None and self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("scorewire listening on "), line + self.stderr()
        return line.rsplit(" ", 1)[1].strip()

    def server_pid(self) -> int:
        """The pid of the image's command (what a runtime's `kill` signals)."""
        assert self.proc is not None
        for pid in _descendants(self.proc.pid):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(part.endswith(b"/scorewire") for part in cmdline) and b"serve" in cmdline:
                return pid
        raise AssertionError("the server process is not running")

    def terminate(self) -> None:
        """SIGTERM to the server, as `docker stop` and the kubelet send it."""
        os.kill(self.server_pid(), signal.SIGTERM)

    def wait(self, timeout: float) -> int:
        assert self.proc is not None
        return self.proc.wait(timeout=timeout)

    def stderr(self) -> str:
        assert self.proc is not None
        if self.proc.poll() is None or self.proc.stderr is None:
            return ""
        return self.proc.stderr.read()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            with_pids = _descendants(self.proc.pid)
            for pid in with_pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            self.proc.kill()
            self.proc.wait(timeout=30)
        subprocess.run(["buildah", "rm", self.name], capture_output=True, timeout=120)


@pytest.fixture
def run_image(image: str, tmp_path: Path) -> Iterator[Any]:
    """Start the image: `run_image(env)` with a fresh state volume, `state=path` to reuse
    one, `state=None` for none; everything started is stopped afterwards."""
    started: list[ImageContainer] = []

    def start(env: dict[str, str], *, state: Path | str | None = "new") -> ImageContainer:
        volume = state if not isinstance(state, str) else tmp_path / f"state-{len(started)}"
        if isinstance(state, str):
            assert volume is not None
            volume.mkdir()
            uid, _, gid = image_config(image).user.partition(":")
            os.chown(volume, int(uid), int(gid or uid))
        container = ImageContainer(image, volume, env)
        started.append(container)
        return container.start()

    try:
        yield start
    finally:
        for container in started:
            container.stop()
