"""Put the native scoring kernel (Rust, `service/native`) inside the server's wheel.

A wheel build compiles the kernel with maturin and adds its extension module
(`scorewire_native`) to the wheel, which then carries this platform's tag: `pip install`
of the server scores on the kernel with nothing else to install. Where the kernel cannot
be built (no Rust toolchain), the wheel is pure Python and the server scores every check
in Python, saying so in its start-up line. `SCOREWIRE_BUILD_NATIVE` chooses:

- `auto` (the default): the kernel when it builds, else a pure wheel and a warning;
- `required`: the kernel or a failed build (images and release wheels);
- `off`: a pure wheel.

Editable installs (`pip install -e .`, `make install`) skip it: `make` installs the
kernel into the virtualenv from `service/native` itself, rebuilt when its sources change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

MODULE = "scorewire_native"


class NativeKernelHook(BuildHookInterface):  # type: ignore[type-arg]
    """Build the kernel's extension into the wheel (see the module docstring)."""

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            return
        mode = os.environ.get("SCOREWIRE_BUILD_NATIVE", "auto").strip().lower() or "auto"
        if mode not in ("auto", "required", "off"):
            raise ValueError(f"SCOREWIRE_BUILD_NATIVE must be auto, required or off, not {mode!r}")
        if mode == "off":
            return
        manifest = Path(self.root) / "service" / "native" / "Cargo.toml"
        out = Path(tempfile.mkdtemp(prefix="scorewire-native-"))
        self._out = out
        # pip's isolated build environment puts maturin's script on PATH
        maturin = shutil.which("maturin")
        command = [
            *([maturin] if maturin else [sys.executable, "-m", "maturin"]),
            "build",
            "--release",
            "--manifest-path",
            str(manifest),
            "--interpreter",
            sys.executable,
            "--out",
            str(out / "wheel"),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wheels = sorted((out / "wheel").glob(f"{MODULE}-*.whl"))
        if done.returncode != 0 or not wheels:
            why = (done.stderr or done.stdout).strip().splitlines()[-3:]
            message = "the native scoring kernel did not build: " + " | ".join(why)
            if mode == "required":
                raise RuntimeError(message)
            print(
                f"warning: {message}; the wheel is pure Python and the server will score "
                "every check in Python (install Rust's cargo to build the kernel)",
                file=sys.stderr,
            )
            return
        package = out / "package"
        with zipfile.ZipFile(wheels[0]) as kernel_wheel:
            for member in kernel_wheel.namelist():
                if member.startswith(f"{MODULE}/"):
                    kernel_wheel.extract(member, package)
        build_data["force_include"][str(package / MODULE)] = MODULE
        build_data["pure_python"] = False
        build_data["infer_tag"] = True

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        out = getattr(self, "_out", None)
        if out is not None:
            shutil.rmtree(out, ignore_errors=True)
