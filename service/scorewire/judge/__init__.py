"""The LLM judge: backends, prompts, strict verdicts, the verdict cache, prices, budgets.

`JudgeService.from_settings(settings)` builds what goes on `CheckContext.judge`; a run's
spend limit goes on `CheckContext.budget` as a `Budget`.
"""

from scorewire.judge.answers import BUDGET_EXHAUSTED, NO_JUDGE, Answer, Question
from scorewire.judge.budget import Budget, BudgetUnavailable, PeriodBudget
from scorewire.judge.models import AUTO, ModelRef, parse_model
from scorewire.judge.pricing import Price, PriceTable
from scorewire.judge.service import JudgeService
from scorewire.judge.stats import JudgeStats

__all__ = [
    "AUTO",
    "BUDGET_EXHAUSTED",
    "NO_JUDGE",
    "Answer",
    "Budget",
    "BudgetUnavailable",
    "JudgeService",
    "JudgeStats",
    "ModelRef",
    "PeriodBudget",
    "Price",
    "PriceTable",
    "Question",
    "parse_model",
]
