"""The peers' dataset shape as plain Python dicts: what a user holds before scoring.

20,000 recorded outputs by default, each a dict `{"id", "input", "expected", "output"}`,
mixed as a `Shape` says. The default shape (`SHAPES["ours"]`, what this generator has
always made):
- 70% prose answers of ~330 characters; `expected.must_include` lists two or three words,
  usually but not always present;
- 20% JSON order objects as text, one in five of them invalid (cut short, or a field of
  the wrong type);
- 10% short exact answers (`Paris`, `42`, ...), a few of them wrong.

`SHAPES["json-heavy"]` is the same generator with half the outputs JSON orders and three
in five of those broken: where the engine's ratio to the peers fell to ~2.6× while it
held ~4× on the default shape (a broken order is a failure whose reason quotes the
parser's error or the expected value, which the engine used to word in Python).
`SHAPES["typographic"]` writes half the prose answers with curly quotes, an em dash and
an ellipsis, as models often do: text beyond ASCII, which the engine also used to score
in Python.

Every reference is a JSON object `{"answer": ..., "must_include": [...]}`. Five checks run
on every output: contains (the must_include list), regex, exact (against `answer`),
json_schema (the order shape) and length. The module imports nothing of scorewire, so
the peers' own environment can import it too.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any

WORDS = [
    "the",
    "order",
    "ships",
    "within",
    "two",
    "business",
    "days",
    "and",
    "returns",
    "are",
    "accepted",
    "for",
    "thirty",
    "days",
    "with",
    "a",
    "receipt",
    "northstar",
    "support",
    "can",
    "help",
    "with",
    "refunds",
    "exchanges",
    "and",
    "warranty",
    "claims",
    "our",
    "team",
    "reviewed",
    "your",
    "account",
    "and",
    "applied",
    "the",
    "credit",
    "to",
    "the",
    "original",
    "payment",
    "method",
    "please",
    "allow",
    "a",
    "few",
    "days",
    "for",
    "the",
    "statement",
    "to",
    "update",
]

ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "integer", "minimum": 1},
        "status": {"enum": ["pending", "shipped", "delivered", "cancelled"]},
        "items": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                "required": ["sku", "qty"],
            },
        },
        "total": {"type": "number", "minimum": 0},
    },
    "required": ["order_id", "status", "items"],
}

REGEX = r"\b(refund|order_id|Paris)\b"
"""A search that hits some prose, every order and one of the short answers."""

MAX_CHARS = 400
MAX_WORDS = 70

SHORT = ("Paris", "42", "yes", "blue", "1969")


def _prose(rng: random.Random) -> tuple[str, list[str]]:
    words: list[str] = []
    while sum(len(w) + 1 for w in words) < rng.randint(290, 370):
        words.append(rng.choice(WORDS))
    text = " ".join(words).capitalize() + "."
    needles = rng.sample(WORDS, rng.randint(2, 3))
    return text, needles


def _typographic(text: str) -> str:
    """`text` with curly quotes around its second word, an em dash for its first " and "
    and an ellipsis for its final full stop."""
    first, second, rest = text.split(" ", 2)
    return f"{first} “{second}” {rest}".replace(" and ", " — ", 1)[:-1] + "…"


def _order(rng: random.Random, i: int, broken: float) -> tuple[str, dict[str, Any]]:
    obj: dict[str, Any] = {
        "order_id": 1000 + i,
        "status": rng.choice(["pending", "shipped", "delivered", "cancelled"]),
        "items": [
            {"sku": f"SKU-{rng.randint(1, 999)}", "qty": rng.randint(1, 4)}
            for _ in range(rng.randint(1, 3))
        ],
        "total": round(rng.uniform(5, 500), 2),
    }
    text = json.dumps(obj)
    roll = rng.random()
    if roll < broken / 2:
        text = text[: len(text) // 2]  # cut short: not JSON
    elif roll < broken:
        text = json.dumps({**obj, "order_id": str(obj["order_id"])})  # wrong type
    return text, obj


@dataclass(frozen=True)
class Shape:
    """How a dataset mixes its outputs, in tenths: of every ten records, `json_tenths`
    are JSON orders and `short_tenths` short answers, the rest prose; `broken` of the
    orders are not valid (half cut short, half with a field of the wrong type);
    `typographic` of the prose answers are written as models often write them, with
    curly quotes, an em dash and an ellipsis (text beyond ASCII)."""

    json_tenths: int = 2
    short_tenths: int = 1
    broken: float = 0.2
    typographic: float = 0.0


SHAPES = {
    "ours": Shape(),
    "json-heavy": Shape(json_tenths=5, broken=0.6),
    "typographic": Shape(typographic=0.5),
}
"""The named shapes the benches run (`--shapes`)."""


def make_records(
    n: int = 20_000, seed: int = 7, shape: Shape = SHAPES["ours"]
) -> list[dict[str, Any]]:
    """`n` plain-dict records of `shape`, the same for the same seed and shape."""
    rng = random.Random(seed)
    prose = 10 - shape.json_tenths - shape.short_tenths
    out = []
    for i in range(n):
        kind = i % 10
        if kind < prose:
            text, needles = _prose(rng)
            if shape.typographic and rng.random() < shape.typographic:
                text = _typographic(text)
            expected: dict[str, Any] = {"answer": text, "must_include": needles}
            if rng.random() < 0.5:
                expected["answer"] = "a different answer"
        elif kind < prose + shape.json_tenths:
            text, obj = _order(rng, i, shape.broken)
            expected = {"answer": obj, "must_include": ["order_id", "status"]}
        else:
            answer = rng.choice(SHORT)
            text = answer if rng.random() < 0.8 else rng.choice(SHORT)
            expected = {"answer": answer, "must_include": [answer]}
        out.append(
            {"id": f"s{i}", "input": {"question": f"q{i}"}, "expected": expected, "output": text}
        )
    return out


def scorewire_checks() -> list[dict[str, Any]]:
    """The five checks as scorewire check specs (plain dicts)."""
    return [
        {
            "type": "contains",
            "params": {"path": "must_include", "require_all": True, "case_sensitive": False},
        },
        {"type": "regex", "params": {"pattern": REGEX}},
        {"type": "exact", "params": {"path": "answer"}},
        {"type": "json_schema", "params": {"schema": ORDER_SCHEMA}},
        {"type": "length", "params": {"max_chars": MAX_CHARS, "max_words": MAX_WORDS}},
    ]
