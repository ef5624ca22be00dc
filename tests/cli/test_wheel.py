"""The server's wheel carries the native scoring kernel when it can be built, and is a
pure-Python wheel (the server then scores in Python and says so) when it cannot
(`hatch_build.py`). `make test-install` installs the wheel with the kernel and checks
the server uses it; here, the fallbacks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.servers import ROOT

PIP = str(Path(sys.executable).parent / "pip")


def _without_cargo() -> str:
    """PATH with every directory that holds a `cargo` left out."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if not (Path(d) / "cargo").exists())


def build(out: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [PIP, "wheel", "-v", "--no-deps", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=600,
    )


def test_no_rust_toolchain_gives_a_pure_wheel_and_says_why(tmp_path: Path) -> None:
    path = _without_cargo()
    assert shutil.which("cargo", path=path) is None
    done = build(tmp_path, PATH=path)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("scorewire-*.whl")
    assert wheel.name.endswith("-py3-none-any.whl")
    assert not [n for n in zipfile.ZipFile(wheel).namelist() if n.startswith("scorewire_native/")]
    assert "the native scoring kernel did not build" in done.stdout + done.stderr


def test_required_without_a_toolchain_fails_the_build(tmp_path: Path) -> None:
    done = build(tmp_path, PATH=_without_cargo(), SCOREWIRE_BUILD_NATIVE="required")
    assert done.returncode != 0
    assert "the native scoring kernel did not build" in done.stdout + done.stderr
    assert not list(tmp_path.glob("*.whl"))


@pytest.mark.parametrize(("mode", "native"), [("off", False), ("auto", True)])
def test_the_setting_chooses_the_kernel(tmp_path: Path, mode: str, native: bool) -> None:
    if native and shutil.which("cargo") is None:
        pytest.skip("cargo is not installed")
    done = build(
        tmp_path,
        SCOREWIRE_BUILD_NATIVE=mode,
        CARGO_TARGET_DIR=str(ROOT / "service/native/target"),  # the tree's build, reused
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("scorewire-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    kernel = [n for n in names if n.startswith("scorewire_native/") and n.endswith(".so")]
    assert bool(kernel) == native
    assert wheel.name.endswith("-py3-none-any.whl") != native
