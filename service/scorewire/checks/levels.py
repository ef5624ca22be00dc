"""Which judge-backed checks grade on a level scale, and how many levels it has.

Calibration (`scorewire.labels.figures.calibrate`) proposes a `pass_level` beside a
threshold for these: `judge` grades on its `scale` (default 5); the checkllm level
assertions and the RAG checks on a fixed 1–5 scale. Their value is (level − 1) /
(scale − 1), so a pass level is the threshold at that level's value.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scorewire.checks import judge, judge_assertions, rag

FIXED_SCALES: dict[str, int] = {
    **dict.fromkeys(judge_assertions.NAMES, judge_assertions.SCALE),
    **dict.fromkeys(
        ("rag.faithfulness", "rag.context_relevance", "rag.answer_relevance"), rag.SCALE
    ),
}
"""Check types that always grade on the same scale."""


def level_scale(check_type: str, params: Mapping[str, Any] | None) -> int | None:
    """The number of levels a check of `check_type` with these raw parameters grades on;
    None when it is not a level check, or when its scale is a parameter and `params` is
    None (not known: a results file holds no parameters)."""
    if check_type in FIXED_SCALES:
        return FIXED_SCALES[check_type]
    if check_type != "judge" or params is None:
        return None
    scale = params.get("scale", judge.DEFAULT_SCALE)
    if isinstance(scale, float) and scale.is_integer():
        scale = int(scale)  # a protobuf Struct carries every number as a double
    return scale if isinstance(scale, int) and 2 <= scale <= 100 else None
