"""Which judge backends are configured and what a check naming a judge needs: the
preflight's judge rules, and the Gemini slot that never borrows OpenAI's key."""

from __future__ import annotations

from typing import Any

import pytest
from scorewire.core.context import CheckContext
from scorewire.judge import JudgeService
from scorewire.judge.answers import Question
from scorewire.judge.models import ModelRef
from scorewire.judge.pricing import PriceTable
from scorewire.judge.prompts import render_grade
from scorewire.judge.routing import HINTS, endpoints_from_settings, judge_problem
from scorewire.judge.verdict import parse_level
from scorewire.settings import Settings

CLEAN = {"OPENAI_API_KEY": "", "OPENAI_BASE_URL": ""}


def problem(model: str, configured: tuple[str, ...], **kw: Any) -> tuple[str, str, str] | None:
    args: dict[str, Any] = {
        "configured": configured,
        "default": kw.pop("default", ModelRef(None, None)),
        "prices": kw.pop("prices", PriceTable()),
        "hints": HINTS,
        "budgeted": kw.pop("budgeted", True),
    }
    return judge_problem(model, **args, **kw)


@pytest.mark.parametrize(
    ("model", "configured", "kind", "setting"),
    [
        # the default judge with nothing configured: no backend at all
        ("", (), "BACKEND", "SCOREWIRE_OPENAI_API_KEY"),
        # a named backend that is not configured, though another is
        ("anthropic:claude-haiku-4-5", ("openai",), "CREDENTIALS", "SCOREWIRE_ANTHROPIC_API_KEY"),
        # a bare model goes to the configured backend: fine when priced
        ("gpt-4o", ("openai",), None, None),
        # an unpriced model under a budget needs a price
        ("openai:my-local-model", ("openai",), "PRICE", "SCOREWIRE_JUDGE_PRICES"),
    ],
)
def test_judge_problem(model: str, configured: tuple[str, ...], kind: Any, setting: Any) -> None:
    found = problem(model, configured)
    assert (found[0], found[1]) == (kind, setting) if found else kind is None


def test_unpriced_is_fine_unbudgeted_or_accepted_and_offline_skips_credentials() -> None:
    # no budget: an unpriced model is only flagged, not refused
    assert problem("openai:my-local-model", ("openai",), budgeted=False) is None
    # the operator's acceptance, or a fallback price
    assert problem("openai:my-local", ("openai",), prices=PriceTable(allow_unpriced=True)) is None
    assert problem("openai:my-local", ("openai",), prices=PriceTable(fallback=(1, 2))) is None
    # offline: a missing backend is not reported, a missing price still is
    assert problem("anthropic:claude-haiku-4-5", (), credentials=False) is None
    assert problem("openai:my-local", (), credentials=False)[0] == "PRICE"  # type: ignore[index]


def test_the_gemini_slot_uses_gemini_credentials_only() -> None:
    # OpenAI's key is present, Gemini's is not: the gemini slot stays unconfigured
    settings = Settings(openai_api_key="sk-openai", metrics_enabled=False)
    slots, hints = endpoints_from_settings(settings, gemini=True, environ=CLEAN)
    assert "openai" not in slots and hints["openai"].name == "gemini"
    slots, _ = endpoints_from_settings(
        Settings(gemini_api_key="gm-key", metrics_enabled=False), gemini=True, environ=CLEAN
    )
    assert slots["openai"].name == "gemini" and slots["openai"].api_key == "gm-key"
    assert "generativelanguage.googleapis.com" in (slots["openai"].base_url or "")


async def test_a_gemini_judge_without_a_key_fails_at_once_naming_gemini(monkeypatch) -> None:
    # no call, no retry: the check's error names gemini and the setting
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "GEMINI_BASE_URL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    judge = JudgeService.from_settings(
        Settings(openai_api_key="sk-openai", metrics_enabled=False), gemini=True
    )
    try:
        question = Question(
            render_grade("polite?", 5, [("output", "hi")]),
            lambda text: parse_level(text, 5),
            ModelRef("openai", "gemini-x"),
        )
        answer = await judge.ask(CheckContext(judge=judge), question)
        assert answer.error_code == "JUDGE_ERROR"
        assert answer.error_message.startswith("the gemini judge backend is not configured")
        assert "SCOREWIRE_GEMINI_API_KEY" in answer.error_message
        assert judge.stats.calls == 0 and judge.stats.retries == 0
        kind, setting, _ = judge.preflight("openai:gemini-x", budgeted=False) or ("", "", "")
        assert (kind, setting) == ("CREDENTIALS", "SCOREWIRE_GEMINI_API_KEY")
    finally:
        await judge.aclose()
