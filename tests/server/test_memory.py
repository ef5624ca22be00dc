"""core/memory.py: freed heap goes back to the system, on glibc."""

import os

import pytest
from scorewire.core import memory

pytestmark = pytest.mark.skipif(
    not memory.Trimmer().available, reason="needs glibc (malloc_trim, mallinfo2)"
)


def _resident() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_trim_is_due_after_a_big_free_and_returns_the_pages() -> None:
    trimmer = memory.Trimmer(threshold=16 << 20)
    trimmer.trim()  # start from a clean heap
    blocks = [bytes(3000) for _ in range(40_000)]  # ~120 MB in heap-sized blocks
    assert not trimmer.due()  # in use is not idle
    kept = blocks[::64]  # pins a block here and there: the heap cannot shrink from its top
    del blocks
    assert trimmer.due()
    before = _resident()
    trimmer.trim()
    assert before - _resident() > 60 << 20
    assert not trimmer.due()
    assert trimmer.trims == 2 and len(kept) == 625


def test_memory_in_use_is_never_due() -> None:
    trimmer = memory.Trimmer(threshold=16 << 20)
    trimmer.trim()
    held = [bytes(3000) for _ in range(40_000)]
    assert not trimmer.due()
    trimmer.maybe_trim()
    assert trimmer.trims == 1 and len(held) == 40_000
