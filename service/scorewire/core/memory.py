"""Memory that big requests freed goes back to the operating system.

Two glibc behaviours kept it (measured with `bench/memory_ratchet.py`: rounds of two 10 MB
Score requests and a 40,000-case RunSuite):

- **The mmap threshold.** glibc serves an allocation above its mmap threshold (128 KiB at
  start) with a mapping of its own, unmapped when freed; but each time such a block is
  freed it raises the threshold to that block's size (up to 32 MiB). After the first
  10 MB output, later ones came from the heap, which keeps what it has: the server
  climbed from 215 MB to 341 MB over six rounds. A threshold set explicitly stays put:
  blocks of 1 MiB and more are mapped and unmapped whatever came before. Set for the
  serving process with `mallopt`, and in the environment (`MALLOC_MMAP_THRESHOLD_`) for
  every process it starts (scoring workers, their forkserver, `--workers` processes),
  which glibc reads as they start. An operator's own value is left as it is.
- **Freed heap pages.** The many small blocks of a big request (a RunSuite's 40,000 cases,
  a 10 MB text's tokens) are freed in the middle of the heap, which glibc returns only
  from its top: the server stayed ~200 MB after its first big request (90 MB before).
  `Trimmer` calls `malloc_trim(0)`, which returns every free page, when `TRIM_IDLE_BYTES`
  more sit resident but unused than after the last trim (`mallinfo2`): back to ~90 MB.
  A trim of ~170 MB of free heap took 13 ms on this machine, on a thread of its own.
  The serving process looks once a second; scoring workers after each job.

Elsewhere than glibc (musl, macOS) all of this does nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import sys
from typing import Any

ENV = "MALLOC_MMAP_THRESHOLD_"
THRESHOLD_BYTES = 1 << 20
TRIM_IDLE_BYTES = 32 << 20
"""Resident but unused bytes, beyond those right after the last trim, worth a trim."""
TRIM_EVERY_S = 1.0
"""How often the serving process looks at what its heaps hold free."""
_M_MMAP_THRESHOLD = -3  # glibc's malloc.h
_PAGE = os.sysconf("SC_PAGE_SIZE")


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena", "ordblks", "smblks", "hblks", "hblkhd",
            "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost",
        )
    ]  # fmt: skip


def _libc() -> Any | None:
    """glibc (2.33 or later: `mallinfo2`), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt, libc.malloc_trim  # noqa: B018  (musl lacks malloc_trim)
        libc.mallinfo2.restype = _MallInfo2
    except (OSError, AttributeError):
        return None
    return libc


_LIBC = _libc()


def idle_resident_bytes() -> int:
    """Resident bytes not in use by any live allocation of glibc's: the resident set less
    what malloc has handed out (`uordblks` in its heaps, `hblkhd` mapped on its own).

    It rises when a request's allocations are freed but their pages stay resident (what
    a trim returns), and not when memory is merely in use. It includes the program's
    own pages (code, libraries, Python's object arenas), so only its rise since the
    last trim says anything.
    """
    if _LIBC is None:
        return 0
    resident = resident_bytes()
    if not resident:
        return 0
    info: _MallInfo2 = _LIBC.mallinfo2()
    return resident - int(info.uordblks) - int(info.hblkhd)


def resident_bytes(pid: int | str = "self") -> int:
    """The resident set size of process `pid` (this one by default), 0 when unknown."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def return_large_buffers() -> bool:
    """Fix the mmap threshold here and for child processes; True when this set it."""
    if _LIBC is None or ENV in os.environ:
        return False
    if not _LIBC.mallopt(_M_MMAP_THRESHOLD, THRESHOLD_BYTES):  # 1 on success
        return False
    os.environ[ENV] = str(THRESHOLD_BYTES)
    return True


class Trimmer:
    """Calls `malloc_trim(0)` once `threshold` more bytes sit resident but unused than
    right after the last trim (`idle_resident_bytes`)."""

    def __init__(self, threshold: int = TRIM_IDLE_BYTES) -> None:
        self.threshold = threshold
        self.trims = 0
        self._base = idle_resident_bytes()

    @property
    def available(self) -> bool:
        """Whether this platform can trim (glibc)."""
        return _LIBC is not None

    def due(self) -> bool:
        """Whether enough freed memory stayed resident to be worth a trim."""
        idle = idle_resident_bytes()
        self._base = min(self._base, idle)
        return idle - self._base >= self.threshold

    def trim(self) -> None:
        """Return free heap pages now (blocking: a thread's, or a worker between jobs)."""
        if _LIBC is None:
            return
        _LIBC.malloc_trim(0)
        self.trims += 1
        self._base = idle_resident_bytes()

    def maybe_trim(self) -> None:
        """`trim()` if it is `due()`."""
        if self.due():
            self.trim()

    async def run(self, every_s: float = TRIM_EVERY_S) -> None:
        """Check every `every_s` and trim on a thread when due, until cancelled."""
        if not self.available:
            return
        while True:
            await asyncio.sleep(every_s)
            if self.due():
                await asyncio.to_thread(self.trim)


async def stop(task: asyncio.Task[None]) -> None:
    """Cancel the `Trimmer.run` task and wait for it."""
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
