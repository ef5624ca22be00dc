"""The per-case limits every entry point applies before an output is scored.

An output is refused (RESOURCE_EXHAUSTED naming the setting) when it is bigger than
`max_output_bytes`, or when the plan's whole-text checks would read more of it than
`max_metric_input_bytes_per_case` (each of them reads the text once, so a plan of many
reads a big output many times).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scorewire.core.errors import join_path
from scorewire.engine.metering import metric_input_bytes
from scorewire.settings import Settings


def check_extras(settings: Settings) -> dict[str, Any]:
    """What every check's context carries besides services: flags and per-request bounds."""
    return {
        "no_local_files": True,
        # Needles read from a case's sample are bounded like literal ones.
        "max_needles_per_request": settings.max_needles_per_request,
        "max_needle_chars_per_request": settings.max_needle_chars_per_request,
    }


def output_problem(
    text: str, field: str, caps: Sequence[int | None], settings: Settings
) -> tuple[str, str] | None:
    """(field, message) when an output is over `max_output_bytes` or would make the plan's
    whole-text checks read more than `max_metric_input_bytes_per_case`; else None."""
    limit = settings.max_output_bytes
    # len(text) counts code points; a code point is at most 4 bytes, so only long
    # texts need encoding to measure.
    chars = len(text)
    if chars * 4 > limit and len(text.encode("utf-8")) > limit:
        return (
            join_path(field, "text"),
            f"output text is larger than max_output_bytes ({limit} bytes)",
        )
    per_case = settings.max_metric_input_bytes_per_case
    if caps and metric_input_bytes(caps, chars * 4) > per_case:
        cost = metric_input_bytes(caps, len(text.encode("utf-8")))
        if cost > per_case:
            return (
                join_path(field, "text"),
                f"whole-text checks would read {cost} bytes of this output, over "
                f"max_metric_input_bytes_per_case ({per_case})",
            )
    return None


def short_output(settings: Settings, caps: Sequence[int | None]) -> int:
    """Characters an output may have and be within the output limits whatever they are:
    a code point is at most 4 bytes, and each whole-text check reads the text once."""
    per_case = settings.max_metric_input_bytes_per_case
    most = min(settings.max_output_bytes, per_case // max(1, len(caps)))
    return most // 4
