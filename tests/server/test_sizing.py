"""A server sizes its scoring workers and memory bounds to its cgroup's CPU quota and
memory limit (as Go's automaxprocs and the JVM do), for every size the operator left
unset, and says what it chose in its start-up line."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorewire.core.cgroup import Limits, read_limits
from scorewire.scoring.sizing import fit
from scorewire.settings import Settings

from tests.support.servers import READY_PREFIX, ROOT, SCOREWIRE, stop_process

GIB = 1 << 30
AFFINITY = len(os.sched_getaffinity(0))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text + "\n")


def test_v2_takes_the_smallest_limit_on_the_path_up_to_the_root(tmp_path: Path) -> None:
    # The pod's cgroup allows 1.5 CPUs and 2 GiB; its child, where the process is, sets
    # no CPU quota and a larger memory limit: the parent's bind.
    root = tmp_path / "cgroup"
    write(root / "cgroup.controllers", "cpu memory")
    write(root / "kubepods/pod1/cpu.max", "150000 100000")
    write(root / "kubepods/pod1/memory.max", str(2 * GIB))
    write(root / "kubepods/pod1/app/cpu.max", "max 100000")
    write(root / "kubepods/pod1/app/memory.max", str(3 * GIB))
    write(tmp_path / "self", "0::/kubepods/pod1/app")
    limits = read_limits(root, tmp_path / "self")
    assert (limits.version, limits.quota, limits.memory) == ("v2", 1.5, 2 * GIB)
    assert limits.cpus == 1  # the quota rounded down: two workers would be throttled
    assert limits.describe() == "cgroup v2: 1 CPUs (quota 1.5), memory 2048 MiB"


def test_v2_in_a_namespace_reads_the_mount_root(tmp_path: Path) -> None:
    # A container with its own cgroup namespace sees its cgroup as `/`.
    root = tmp_path / "cgroup"
    write(root / "cgroup.controllers", "cpu memory")
    write(root / "cpu.max", "max 100000")
    write(root / "memory.max", "max")
    write(tmp_path / "self", "0::/")
    limits = read_limits(root, tmp_path / "self")
    assert (limits.quota, limits.memory, limits.cpus) == (None, None, AFFINITY)


def test_v1_reads_each_controllers_path_and_ignores_the_no_limit_value(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    write(root / "cpu,cpuacct/cpu.cfs_quota_us", "-1")
    write(root / "cpu,cpuacct/job/cpu.cfs_quota_us", "300000")
    write(root / "cpu,cpuacct/job/cpu.cfs_period_us", "100000")
    write(root / "memory/memory.limit_in_bytes", "9223372036854771712")
    write(root / "memory/box/memory.limit_in_bytes", str(GIB))
    (root / "memory/box/inner").mkdir()
    write(tmp_path / "self", "4:memory:/box/inner\n2:cpu,cpuacct:/job\n0::/")
    limits = read_limits(root, tmp_path / "self")
    assert (limits.version, limits.quota, limits.memory) == ("v1", 3.0, GIB)
    assert limits.cpus == min(AFFINITY, 3)


def test_no_cgroup_filesystem_means_no_limits(tmp_path: Path) -> None:
    limits = read_limits(tmp_path / "absent", tmp_path / "absent-self")
    assert limits == Limits(cpus=AFFINITY, quota=None, memory=None, version="none")


def test_a_1_gib_pod_on_a_16_core_node_starts_the_workers_that_fit() -> None:
    sized = fit(Settings(), Limits(cpus=16, quota=None, memory=GIB, version="v2"))
    assert sized.max_bytes_in_flight == GIB // 4
    assert sized.max_bytes_in_flight_per_tenant == GIB // 8
    # 1024 MiB - 192 MiB for the serving process - 256 MiB in flight = 576 MiB: three
    # workers of at least 160 MiB, each allowed a third of it.
    assert sized.scoring_workers == 3 and sized.scoring_worker_max_rss_mb == 192
    total = (
        192 * (1 << 20)
        + sized.max_bytes_in_flight
        + sized.scoring_workers * (sized.scoring_worker_max_rss_mb << 20)
    )
    assert total <= GIB


def test_server_processes_share_the_limit() -> None:
    one = fit(Settings(), Limits(cpus=8, quota=None, memory=8 * GIB, version="v2"))
    two = fit(Settings(workers=2), Limits(cpus=8, quota=None, memory=8 * GIB, version="v2"))
    assert one.max_bytes_in_flight == 512 << 20  # the default already fits
    assert two.max_bytes_in_flight == 512 << 20
    assert one.scoring_worker_max_rss_mb == 768 and two.scoring_worker_max_rss_mb < 768


def test_what_the_operator_set_is_kept_and_no_limit_changes_only_the_cores() -> None:
    given = Settings(scoring_workers=6, scoring_worker_max_rss_mb=900, max_bytes_in_flight=1 << 30)
    kept = fit(given, Limits(cpus=2, quota=2.0, memory=GIB, version="v1"))
    assert (kept.scoring_workers, kept.scoring_worker_max_rss_mb) == (6, 900)
    assert kept.max_bytes_in_flight == 1 << 30
    free = fit(Settings(), Limits(cpus=4, quota=None, memory=None, version="none"))
    assert free.scoring_workers == 4
    assert free.scoring_worker_max_rss_mb == Settings().scoring_worker_max_rss_mb


# ---- a real cgroup --------------------------------------------------------------------------

V1 = Path("/sys/fs/cgroup")


def _own_v1_path(controller: str) -> str | None:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        _, names, path = line.split(":", 2)
        if controller in names.split(","):
            return path
    return None


@pytest.fixture
def real_cgroup() -> Iterator[tuple[Path, Path]]:
    """A v1 memory cgroup of 1 GiB and a cpu cgroup of one CPU, children of this
    process's own (skipped where cgroups cannot be made: not root, or cgroup v2 only)."""
    mem_path, cpu_path = _own_v1_path("memory"), _own_v1_path("cpu")
    if mem_path is None or cpu_path is None or not os.access(V1 / "memory", os.W_OK):
        pytest.skip("needs writable cgroup v1 memory and cpu hierarchies (root)")
    name = f"scorewire-test-{os.getpid()}-{time.monotonic_ns()}"
    mem = V1 / "memory" / mem_path.strip("/") / name
    cpu = V1 / "cpu" / cpu_path.strip("/") / name
    try:
        mem.mkdir()
        cpu.mkdir()
        (mem / "memory.limit_in_bytes").write_text(str(GIB))
        (cpu / "cpu.cfs_period_us").write_text("100000")
        (cpu / "cpu.cfs_quota_us").write_text("100000")
    except OSError as err:
        for d in (mem, cpu):
            if d.exists():
                d.rmdir()
        pytest.skip(f"cannot make a cgroup here: {err}")
    try:
        yield mem, cpu
    finally:
        for d in (mem, cpu):
            for _ in range(50):  # the server's processes leave the cgroup as they exit
                try:
                    d.rmdir()
                    break
                except OSError:
                    time.sleep(0.1)


def test_a_server_in_a_1_gib_one_cpu_cgroup_says_what_it_sized(
    real_cgroup: tuple[Path, Path], tmp_path: Path
) -> None:
    mem, cpu = real_cgroup
    enter = f'echo $$ > {mem}/cgroup.procs && echo $$ > {cpu}/cgroup.procs && exec "$@"'
    env = dict(os.environ, SCOREWIRE_METRICS_ENABLED="false", SCOREWIRE_STATE_DIR=str(tmp_path))
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    proc = subprocess.Popen(
        ["sh", "-c", enter, "sh", SCOREWIRE, "serve", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=ROOT,
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith(READY_PREFIX)
        line = ""
        while "serving on" not in line:
            line = proc.stderr.readline()
            assert line, "the server ended before its serving line"
    finally:
        stop_process(proc)
    assert "limits cgroup v1: 1 CPUs (quota 1), memory 1024 MiB" in line, line
    assert "scoring workers 1 per process (at most 576 MB each)" in line, line
    assert "requests in flight at most 256 MiB (128 MiB per tenant)" in line, line
