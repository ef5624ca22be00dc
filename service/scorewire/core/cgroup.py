"""The CPU and memory this process may use, read from its cgroup (v2 or v1), as Go's
automaxprocs and the JVM do: a server in a pod on a 64-core node with a 1 GiB limit sizes
itself to the pod, not to the node.

A limit is the smallest one on the path from the process's cgroup up to the hierarchy's
root (a parent's limit binds its children). Inside a container with its own cgroup
namespace the process's path is `/` and the mount's root holds the container's limits.
Anything unreadable counts as no limit: the reader never stops a server from starting.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")
_V1_NO_LIMIT = 1 << 62
"""cgroup v1 writes a page-rounded LONG_MAX for "no memory limit"."""


@dataclass(frozen=True)
class Limits:
    """What the cgroup and the CPU affinity allow; None where nothing limits."""

    cpus: int
    """Cores to size for: the affinity mask's count, lowered to the CPU quota rounded
    down (at least 1), so workers do not outnumber the time they may run."""
    quota: float | None
    """The CPU quota in cores (`cpu.max`, `cpu.cfs_quota_us`), None: no quota."""
    memory: int | None
    """The memory limit in bytes (`memory.max`, `memory.limit_in_bytes`), None: none."""
    version: str
    """`v2`, `v1` or `none` (no cgroup filesystem found)."""

    def describe(self) -> str:
        """`cgroup v2: 2 CPUs (quota 2.5), memory 1024 MiB`, for the start-up line."""
        quota = f" (quota {self.quota:g})" if self.quota is not None else ""
        memory = f"{self.memory >> 20} MiB" if self.memory is not None else "no limit"
        return f"cgroup {self.version}: {self.cpus} CPUs{quota}, memory {memory}"


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except (OSError, UnicodeDecodeError):
        return None


def _chain(mount: Path, sub: str) -> list[Path]:
    """The directories from the process's cgroup `sub` under `mount` up to `mount`
    itself, those that exist (a path of the host's view missing in a container's mount
    leaves the mount's root)."""
    parts = [p for p in sub.split("/") if p and p != ".."]
    candidates = (mount.joinpath(*parts[:i]) for i in range(len(parts), -1, -1))
    return [d for d in candidates if d.is_dir()]


def _paths(proc_cgroup: Path) -> dict[str, str]:
    """Controller (or "" for v2's unified hierarchy) → the process's cgroup path."""
    found: dict[str, str] = {}
    for line in (_read(proc_cgroup) or "").splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            found[controller] = parts[2]
    return found


def _v2(mount: Path, sub: str) -> tuple[float | None, int | None]:
    quota: float | None = None
    memory: int | None = None
    for d in _chain(mount, sub):
        cpu = (_read(d / "cpu.max") or "max").split()
        if cpu and cpu[0] != "max":
            try:
                period = float(cpu[1]) if len(cpu) > 1 else 100_000.0
                cores = float(cpu[0]) / period
            except ValueError:
                cores = math.inf
            quota = cores if quota is None else min(quota, cores)
        mem = _read(d / "memory.max") or "max"
        if mem.isdigit():
            memory = int(mem) if memory is None else min(memory, int(mem))
    return quota, memory


def _v1(root: Path, paths: dict[str, str]) -> tuple[float | None, int | None]:
    quota: float | None = None
    memory: int | None = None
    for name in ("cpu", "cpu,cpuacct", "cpuacct,cpu"):
        mount = root / name
        if not mount.is_dir():
            continue
        for d in _chain(mount, paths.get("cpu", "/")):
            raw_quota, raw_period = _read(d / "cpu.cfs_quota_us"), _read(d / "cpu.cfs_period_us")
            try:
                us, period = int(raw_quota or "-1"), int(raw_period or "100000")
            except ValueError:
                continue
            if us > 0 and period > 0:
                quota = us / period if quota is None else min(quota, us / period)
        break
    mount = root / "memory"
    if mount.is_dir():
        for d in _chain(mount, paths.get("memory", "/")):
            raw = _read(d / "memory.limit_in_bytes") or ""
            if raw.isdigit() and int(raw) < _V1_NO_LIMIT:
                memory = int(raw) if memory is None else min(memory, int(raw))
    return quota, memory


def read_limits(root: Path = ROOT, proc_cgroup: Path = PROC_CGROUP) -> Limits:
    """This process's limits (the files' locations are arguments for tests)."""
    paths = _paths(proc_cgroup)
    try:
        affinity = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        affinity = os.cpu_count() or 1
    if (root / "cgroup.controllers").is_file():
        version = "v2"
        quota, memory = _v2(root, paths.get("", "/"))
    elif (root / "memory").is_dir() or (root / "cpu").is_dir():
        version = "v1"
        quota, memory = _v1(root, paths)
        unified = root / "unified"
        if (unified / "cgroup.controllers").is_file():  # hybrid: limits may sit in v2 too
            q2, m2 = _v2(unified, paths.get("", "/"))
            quota = q2 if quota is None else quota if q2 is None else min(quota, q2)
            memory = m2 if memory is None else memory if m2 is None else min(memory, m2)
    else:
        version, quota, memory = "none", None, None
    cpus = affinity
    if quota is not None and math.isfinite(quota):
        cpus = max(1, min(affinity, math.floor(quota)))
    return Limits(cpus=cpus, quota=quota, memory=memory, version=version)
