"""Which judges a score came from: noted while a check runs, attached to its Score.

The judge service notes each answer it hands a check (`note_judge`): the judge asked
(`backend:model`) and the model its provider reported. The engine opens a trail around
each check it runs (`judge_trail`) and attaches what was noted to the check's Score as a
`JudgeMark`, so every judge-backed check family, panel and cascade records its judges
without each building the record itself. A recorded run keeps the mark with the score;
drift between runs is compared on it (`scorewire.runs.drift`).

The trail is a context variable: a panel's judges asked in tasks of their own (which
copy the context) note into the same list.
"""

from __future__ import annotations

from contextvars import ContextVar

_TRAIL: ContextVar[list[tuple[str, str]] | None] = ContextVar("scorewire_judge_trail", default=None)


class JudgeMark:
    """The judges behind one score and the prompt version they were asked with."""

    __slots__ = ("models", "prompt_version", "reported")

    models: tuple[str, ...]
    """Each judge asked, `backend:model`, distinct, in the order first asked."""
    reported: tuple[str, ...]
    """The model names the providers reported (the response's `model`), distinct, in the
    order first seen; empty when no provider said (a cache entry older than this record)."""
    prompt_version: str
    """The judge prompts' version (`scorewire.judge.prompts.PROMPT_VERSION`)."""

    def __init__(
        self, models: tuple[str, ...], reported: tuple[str, ...], prompt_version: str
    ) -> None:
        self.models = models
        self.reported = reported
        self.prompt_version = prompt_version

    def __repr__(self) -> str:
        return f"JudgeMark({self.models!r}, reported={self.reported!r})"


PROMPT_VERSION = "scorewire-judge/1"
"""Version of every judge prompt template; bump it when any wording changes (the verdict
cache's key includes it, and a recorded score keeps it)."""


def note_judge(model: str, reported: str) -> None:
    """Note that the running check got an answer from judge `model` (`backend:model`),
    whose provider reported model `reported` (empty when unknown). No-op outside a trail."""
    trail = _TRAIL.get()
    if trail is not None:
        trail.append((model, reported))


def open_trail() -> tuple[list[tuple[str, str]], object]:
    """Start noting judges for one check: the trail and the token that `close_trail` takes."""
    trail: list[tuple[str, str]] = []
    return trail, _TRAIL.set(trail)


def close_trail(token: object) -> None:
    """Stop noting judges for the check `open_trail` started."""
    _TRAIL.reset(token)  # type: ignore[arg-type]


def mark_of(trail: list[tuple[str, str]]) -> JudgeMark | None:
    """The JudgeMark of what a trail noted; None when no judge answered."""
    if not trail:
        return None
    models = tuple(dict.fromkeys(m for m, _ in trail))
    reported = tuple(dict.fromkeys(r for _, r in trail if r))
    return JudgeMark(models, reported, PROMPT_VERSION)
