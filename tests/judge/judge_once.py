"""Score one judge check in a fresh process, configured only by SCOREWIRE_* variables.

    python -m tests.judge.judge_once "<output text>"

Prints the score as JSON. Used to show that two server processes sharing one Redis
make a single judge call for the same prompt.
"""

from __future__ import annotations

import asyncio
import json
import sys

import scorewire.checks  # noqa: F401  (registers the check types)
from scorewire.core.context import CheckContext
from scorewire.core.model import Output, Sample
from scorewire.engine.execute import run_check
from scorewire.engine.spec import CheckSpec, compile_check
from scorewire.judge import JudgeService
from scorewire.settings import Settings


async def main(text: str) -> None:
    svc = JudgeService.from_settings(Settings())
    try:
        check = compile_check(CheckSpec("judge", {"rubric": "Is it polite?"}), "checks[0]")
        score = await run_check(check, Sample("s1"), Output(text), CheckContext(judge=svc))
    finally:
        await svc.aclose()
    print(
        json.dumps(
            {
                "value": score.value,
                "cached": score.cached,
                "cost_usd": score.cost_usd,
                "error": score.error.code if score.error else None,
                "bypasses": svc.stats.cache_bypasses,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
