"""What the pages put in HTML: escaped summaries and script-safe JSON blocks."""

from __future__ import annotations

import json
import re

from scorewire.viewer import CaseResult, CheckStats, RunDetail, RunInfo, ScoreResult
from scorewire.viewer.render import cases_json, render_report, render_runs

HOSTILE = '</script><!--<script>alert(1)</script>\u2028<img src=x onerror="alert(2)">&amp;'


def _run() -> tuple[RunDetail, list[CaseResult]]:
    info = RunInfo("r1", HOSTILE, None, "evalstone", 1, 0.0, 0.0, 0.0, False, {"k": HOSTILE})
    check = CheckStats(HOSTILE, "contains", 0, 1, 0, 0, 0.0)
    detail = RunDetail(info, [check], [HOSTILE], description=HOSTILE)
    case = CaseResult(
        0, HOSTILE, {"q": HOSTILE}, HOSTILE, HOSTILE, False,
        [ScoreResult(HOSTILE, "contains", 0.0, False, HOSTILE)],
    )  # fmt: skip
    return detail, [case]


def test_a_json_block_round_trips_and_cannot_end_its_script() -> None:
    # no "<" at all: neither </script> nor <!-- can change how the block parses
    _, cases = _run()
    text = str(cases_json(cases))
    assert "<" not in text and ">" not in text and "\u2028" not in text
    assert json.loads(text)[0]["output"] == HOSTILE


def test_every_value_from_a_run_is_escaped_in_the_html() -> None:
    # the run's name, labels, check names, gate reasons, description: all text
    detail, cases = _run()
    for page in (render_report(detail, cases), render_runs([detail.info])):
        assert "<img" not in page and "alert(1)</script>" not in page
        assert "&lt;img src=x" in page
        # the one script element that runs is the viewer's, with the page's nonce
        nonce = re.search(r"script-src &#39;nonce-([A-Za-z0-9_-]+)", page)
        assert nonce is not None
        assert re.findall(r"<script(?![^>]*application/json)[^>]*>", page) == [
            f'<script nonce="{nonce.group(1)}">'
        ]
