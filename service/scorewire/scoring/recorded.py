"""Recorded runs as the server stores them: the cases and results as sent, read back.

A recorded chunk's `cases` are the serialized cases as the caller sent them
(`cases_blob`), and its `results` a serialized `RunSuiteResponse` with the results as
sent; the i-th case belongs to the i-th result. Scoring only concatenates bytes it
already has; `CODEC` decodes on read (the RunService, Agreement, the viewer).
"""

from __future__ import annotations

import json
import struct
from collections.abc import Sequence
from typing import Any

from scorewire.core.model import Spread
from scorewire.engine.summary import Summary
from scorewire.runs import CaseRecord, Chunk, ScoreRecord
from scorewire.scoring import wire
from scorewire.v1 import scoring_pb2 as pb


def cases_blob(serialized_cases: Sequence[bytes]) -> bytes:
    """Serialized cases in one blob: their count, their lengths (little-endian uint32s),
    then the cases. Two C-level packs per chunk: nothing per case on the scoring path."""
    n = len(serialized_cases)
    header = struct.pack(f"<I{n}I", n, *map(len, serialized_cases))
    return header + b"".join(serialized_cases)


def split_cases(blob: bytes) -> list[bytes]:
    """The serialized cases of a `cases_blob`."""
    if not blob:
        return []
    (n,) = struct.unpack_from("<I", blob)
    lengths = struct.unpack_from(f"<{n}I", blob, 4)
    out, at = [], 4 + 4 * n
    for size in lengths:
        out.append(blob[at : at + size])
        at += size
    return out


def read_cases(blob: bytes) -> list[pb.Case]:
    """The cases of a `cases_blob`."""
    return [pb.Case.FromString(c) for c in split_cases(blob)]


class PbChunkCodec:
    """Decodes chunks the server stored into case records (`raw` = (Case, CaseResult))."""

    def decode(self, chunk: Chunk) -> list[CaseRecord]:
        """The chunk's cases, in the order they were recorded."""
        cases = read_cases(chunk.cases)
        results = pb.RunSuiteResponse.FromString(chunk.results).results.results
        out = []
        for i, r in enumerate(results):
            c = cases[i] if i < len(cases) else pb.Case(sample=pb.Sample(id=r.sample_id))
            scores = [
                ScoreRecord(
                    s.name,
                    s.type,
                    s.value,
                    s.passed,
                    s.reason,
                    s.cost_usd,
                    s.latency_ms,
                    s.cached,
                    s.skipped,
                    s.error.code,
                    s.error.message,
                    tuple(s.judge.models),
                    tuple(s.judge.reported_models),
                    s.judge.prompt_version,
                    _spread(s.spread) if s.HasField("spread") else None,
                )
                for s in r.scores
            ]
            sample, output = c.sample, c.output
            out.append(
                CaseRecord(
                    index=r.index,
                    sample_id=r.sample_id,
                    input=json_value(sample, "input"),
                    expected=json_value(sample, "expected"),
                    output=output.text,
                    output_value=json_value(output, "value"),
                    passed=r.passed,
                    scores=scores,
                    raw=(c, r),
                )
            )
        return out


CODEC = PbChunkCodec()


def _spread(m: pb.ScoreSpread) -> Spread:
    """A recorded score's spread (as `wire.score_to_pb` wrote it)."""
    return Spread(tuple(m.values), m.agreement, calls=m.judge_calls or None)


def json_value(message: Any, name: str) -> Any:
    """A JSON value sent as a `Value` field or as its `<name>_json` text; None when unset.
    (A stored case was valid when it was scored, so its JSON text parses.)"""
    if message.HasField(name):
        return wire.value_to_py(getattr(message, name))
    text = getattr(message, f"{name}_json")
    return json.loads(text) if text else None


def summary_json(s: Summary) -> dict[str, Any]:
    """The summary as stored with a run."""
    return {
        "cases": s.cases,
        "cases_passed": s.cases_passed,
        "passed": s.passed,
        "failed": s.failed,
        "errored": s.errored,
        "skipped": s.skipped,
        "pass_rate": s.pass_rate,
        "mean_score": s.mean_score,
        "error_rate": s.error_rate,
        "cost_usd": s.cost_usd,
        "unpriced": s.unpriced,
        "gate": {"passed": s.gate_passed, "reasons": list(s.gate_reasons)},
        "checks": [
            {
                "name": t.name,
                "type": t.type,
                "passed": t.passed,
                "failed": t.failed,
                "errored": t.errored,
                "skipped": t.skipped,
                "mean_value": t.mean_value,
                "cost_usd": t.cost_usd,
                "cached": t.cached,
            }
            for t in s.checks
        ],
    }
