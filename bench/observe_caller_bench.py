"""What the Go client's `observe` costs a caller: an HTTP handler's p50/p99 with and without.

Run: `.venv/bin/python bench/observe_caller_bench.py` (`--help` for the flags, e.g.
`--rate 2000 --runs 7`). Loopback only, bounded:
2 s of warm-up per path, then `--runs` (5) runs of two `--seconds` (5) phases.

Starts one `scorewire serve` (embedded SQLite queue under a temporary state directory,
one rule sampling 10% of traces for two deterministic checks, as `bench/observe_bench.py`
does), builds `bench/go_observe` and runs it against the server: a net/http handler on
loopback served at a steady `--rate` (1,000 requests/s, open loop), the path without
`observe` and the path with it alternating within each run (ABBA order across runs). It
prints each phase's p50, p99 and max, the median and spread across runs, the p99
difference within each run, and the Observer's counters (queued, dropped by reason).

The server shares the machine's cores with the handler and the load: in the phases
with `observe` it is also ingesting and scoring, which the numbers include.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.servers import serve_process, stop_process

ROOT = Path(__file__).resolve().parents[1]
RULES = """rules:
  - name: bench
    compact: ["contains:Paris", "length:1..200"]
    sampling_rate: 0.1
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rate", type=int, default=1000, help="requests per second")
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each phase")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    if not 1 <= args.runs <= 20 or not 0 < args.seconds <= 30 or not 1 <= args.rate <= 20_000:
        raise SystemExit("bounded: --runs 1..20, --seconds up to 30, --rate up to 20,000")
    with tempfile.TemporaryDirectory() as state:
        Path(state, "rules.yaml").write_text(RULES, encoding="utf-8")
        binary = str(Path(state) / "go_observe")
        go_observe = ROOT / "bench" / "go_observe"
        subprocess.run(["go", "build", "-o", binary, "."], cwd=go_observe, check=True)
        proc, address = serve_process(
            {"SCOREWIRE_STATE_DIR": state, "SCOREWIRE_OBSERVE_RULES_FILE": "rules.yaml"},
            "--host",
            "127.0.0.1",
        )
        try:
            done = subprocess.run(
                [
                    *(binary, "-scorewire", address, "-rate", str(args.rate)),
                    *("-seconds", str(args.seconds), "-runs", str(args.runs)),
                ],
                timeout=60 + 2 * args.runs * args.seconds * 2,
            )
        finally:
            stop_process(proc)
    sys.exit(done.returncode)


if __name__ == "__main__":
    main()
