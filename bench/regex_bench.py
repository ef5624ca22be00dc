"""Regex micro-benchmark: user patterns on the linear-time engine, pathological ones included.

Run: `make bench-regex` (or `.venv/bin/python bench/regex_bench.py [--chars N]`).
For each pattern it prints the load time (translation + RE2 compile, once per check), the
size of the RE2 pattern actually run, and the best-of-rounds time of one `search` over a
text of `--chars` characters (50,000 by default). Target: every search well under a
millisecond on the pathological rows (`(a+)+$` takes Python's `re` 1.1 s at 24
characters and doubles with each one more; see docs/FACTS.md). Python's `re` is never run
on these texts.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "service")]

from scorewire.regex.engine import compile_user_regex  # noqa: E402

PROSE = "The order ships within two business days; café, naïve and 日本語 too. "


def prose(n: int) -> str:
    """`n` characters of mixed-script prose."""
    return (PROSE * (n // len(PROSE) + 1))[:n]


# (pattern, flags, text maker, what the row shows)
ROWS = [
    ("(a+)+$", 0, lambda n: "a" * n + "!", "pathological: nested repetition, no match"),
    ("(a+)+$", 0, lambda n: "a" * n, "pathological: nested repetition, a match at the end"),
    ("(a|aa)+$", 0, lambda n: "a" * n + "!", "pathological: overlapping alternation"),
    (r"(\w+\s?)+$", 0, lambda n: "ab " * (n // 3) + "!", "pathological: \\w and \\s nested"),
    (r"(a+)+\b", 0, lambda n: "a" * n + "é", "pathological, with a Unicode \\b (rebuilt)"),
    (r"\bcat\b", 0, prose, "Unicode \\b, no match"),
    (r"\b(?:yes|no)\b", 2, lambda n: prose(n) + " YES", "\\b, IGNORECASE"),
    (r"^(?:\b\w+\b\W*)+$", 0, lambda n: prose(n) + "\x00", "\\b in a repeated group"),
    (r"\B", 256, lambda n: "aé" * (n // 2), "ASCII \\B between multi-byte characters"),
    ("(?:done$|ok)!", 0, lambda n: "x" * n + "done\n", "$ before more pattern (rebuilt)"),
    (r"^OK: [0-9]{1,3}$|score", 0, lambda n: "x" * n, "the engine benchmark's pattern"),
]


def best_search(rx: object, text: str, rounds: int) -> float:
    search = rx.search  # type: ignore[attr-defined]
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        search(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    compile_user_regex(r"\w\d\s")  # builds the Unicode class tables once, outside the rows
    print(f"{'pattern':24} {'flags':>5} {'load ms':>8} {'re2 chars':>9} {'search ms':>9}  row")
    for pattern, flags, make, note in ROWS:
        start = time.perf_counter()
        rx = compile_user_regex(pattern, flags)
        load = time.perf_counter() - start
        text = make(args.chars)
        took = best_search(rx, text, args.rounds)
        found = "match" if rx.search(text) else "no match"
        print(
            f"{pattern!s:24} {flags:>5} {load * 1e3:8.1f} {len(rx.translated):9,} "
            f"{took * 1e3:9.3f}  {note} ({found}, {len(text):,} chars)"
        )


if __name__ == "__main__":
    main()
