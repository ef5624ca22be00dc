"""Random requests never crash a built-in check or the server.

Every check type of the catalog that needs no judge is sent, through the real server,
with parameters drawn from its own parameter schema (and, now and then, any JSON value in
their place), over random outputs and references: prose, JSON, empty texts, combining
marks, dotted capitals, huge and negative numbers. Whatever is drawn, the answer is a
status the caller can act on (a refusal names its field) or scores; never INTERNAL or
UNKNOWN, and never the score of a built-in check that raised ("failed unexpectedly") or
took its scoring worker down. The draws are seeded, so a failure replays.
"""

from __future__ import annotations

import json
import random
from typing import Any

import grpc
from google.protobuf import json_format
from scorewire.v1 import scoring_pb2 as pb

from tests.server.conftest import Server

PER_TYPE = 30
"""Requests per check type."""
SEED = 20261202

TEXTS = [
    "Paris", "Rome", "a", "", "é", "İ", "\u0301", "ß", "  ", "\n", "0", "-1", "1e309",
    "null", "[]", "{}", "\\", ".*", "(", "a{2,1}", "🙂", "x" * 50, "must_include", "answer",
    "$.a", "a.b", "[0]", "{{q}}",
]  # fmt: skip
NUMBERS = [0, 1, -1, 2, 3, 10, 1000, 10**6, 2**53 + 1, -(2**63), 0.5, -0.5, 1e300]
KEYS = ["a", "answer", "must_include", "text", "type", "value", "steps", "name", "x"]
"""Object keys the checks read somewhere (references, trajectories, parameters)."""
CRASHED = ("failed unexpectedly", "crashed its scoring worker")
"""What the reason of a built-in check that raised, or that killed its worker, says."""
ACTIONABLE = {
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
}


def _any(rng: random.Random, depth: int = 0) -> Any:
    """Any JSON value, shallow."""
    k = rng.random()
    if depth > 3 or k < 0.3:
        return rng.choice(TEXTS)
    if k < 0.45:
        return rng.choice(NUMBERS)
    if k < 0.5:
        return rng.choice([True, False, None])
    if k < 0.75:
        return [_any(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {rng.choice(KEYS): _any(rng, depth + 1) for _ in range(rng.randint(0, 3))}


def _param(rng: random.Random, schema: dict[str, Any], depth: int = 0) -> Any:
    """A value for a parameter of `schema`: usually of its type, sometimes anything."""
    if "enum" in schema and rng.random() < 0.7:
        return rng.choice(schema["enum"])
    if rng.random() < 0.15:
        return _any(rng, depth)
    kind = schema.get("type")
    if kind == "string":
        return rng.choice(TEXTS)
    if kind == "integer":
        return rng.choice([0, 1, 2, -1, 5, 100, 10**9])
    if kind == "number":
        return rng.choice([0, 0.5, 1, -1, 2.5, 1e9])
    if kind == "boolean":
        return rng.choice([True, False])
    if kind == "array":
        return [_param(rng, schema.get("items", {}), depth + 1) for _ in range(rng.randint(0, 3))]
    if kind == "object" and depth < 2:
        props = schema.get("properties", {})
        return {k: _param(rng, v, depth + 1) for k, v in props.items() if rng.random() < 0.5}
    for alternative in schema.get("anyOf", [])[:1]:
        return _param(rng, alternative, depth + 1)
    return _any(rng, depth)


def _request(rng: random.Random, info: pb.CheckInfo) -> pb.ScoreRequest:
    schema = json_format.MessageToDict(info.params_schema)
    params = {
        k: _param(rng, v) for k, v in schema.get("properties", {}).items() if rng.random() < 0.6
    }
    req = pb.ScoreRequest(checks=[pb.CheckSpec(type=info.type)])
    if params:
        req.checks[0].params.update(params)
    if rng.random() < 0.4:
        req.output.text = " ".join(rng.choice(TEXTS) for _ in range(rng.randint(0, 12)))
    else:
        req.output.text = json.dumps(_any(rng))
    if rng.random() < 0.3:
        req.output.value_json = json.dumps(_any(rng))
    if rng.random() < 0.7:
        req.sample.expected_json = json.dumps(_any(rng))
    if rng.random() < 0.3:
        req.sample.input_json = json.dumps(_any(rng))
    return req


async def test_random_parameters_outputs_and_references_never_crash_a_check(
    server: Server,
) -> None:
    catalog = await server.stub.ListChecks(pb.ListChecksRequest())
    types = [c for c in catalog.checks if not c.uses_judge and c.family != "custom"]
    assert len(types) >= 25  # deterministic, text, rag, safety, trajectory... (29 today)
    rng = random.Random(SEED)
    problems: list[str] = []
    scored = refused = 0
    for info in types:
        for _ in range(PER_TYPE):
            req = _request(rng, info)
            try:
                response = await server.stub.Score(req, timeout=30)
            except grpc.aio.AioRpcError as err:
                if err.code() not in ACTIONABLE:
                    problems.append(f"{info.type}: {err.code().name} {err.details()}: {req}")
                refused += 1
                continue
            scored += 1
            for s in response.scores:
                if any(marker in s.error.message for marker in CRASHED):
                    problems.append(f"{info.type}: {s.error.message}: {req}")
    assert problems == []
    # Both sides were exercised: requests the checks scored and ones the server refused.
    assert scored > len(types) * PER_TYPE // 4 and refused > len(types)
    # and the server still answers
    ok = await server.stub.Score(
        pb.ScoreRequest(compact=["contains:Paris"], output=pb.Output(text="Paris"))
    )
    assert ok.passed
