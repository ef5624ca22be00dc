"""Judge model names: `backend:model`, a bare backend, a bare model, or `auto`.

Parsed once when a check loads, so a typo in a backend name is a load error rather
than a failed call per sample.
"""

from __future__ import annotations

from dataclasses import dataclass

BACKENDS = ("openai", "anthropic")
"""Backend names: `openai` is any OpenAI-compatible chat-completions endpoint (OpenAI,
vLLM, Ollama, llama.cpp's server, Gemini's OpenAI endpoint); `anthropic` is the
Anthropic Messages API."""

DEFAULT_MODELS = {"openai": "gpt-4o-mini", "anthropic": "claude-haiku-4-5"}
"""The model used when only a backend is named (or picked by `auto`)."""


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A judge model as written: either part may be left to the configured default."""

    backend: str | None
    """`openai`, `anthropic`, or None for the default backend (or `auto`)."""
    model: str | None
    """The backend's model name, or None for that backend's default model."""

    def __str__(self) -> str:
        if self.backend is None:
            return self.model or "auto"
        return f"{self.backend}:{self.model}" if self.model else self.backend


AUTO = ModelRef(None, None)
"""Pick the backend from the credentials present, with its default model."""


def parse_model(text: str | None) -> ModelRef:
    """Parse a model name; raise ValueError with a message for people when it is unusable.

    - `""`, None or `auto`: the configured default (or pick by credentials).
    - `openai` / `anthropic`: that backend with its default model.
    - `openai:gpt-4o-mini`: that backend and model. Everything after the first colon is
      the model, so Ollama's `openai:llama3:8b` works.
    - `gpt-4o-mini` (no colon): that model on the default backend. A name with a colon
      must start with a backend, so `anthropc:claude-…` is an error, not a silent
      request to the default backend.
    """
    if text is None:
        return AUTO
    name = text.strip()
    if name in ("", "auto"):
        return AUTO
    if name in BACKENDS:
        return ModelRef(name, None)
    if ":" not in name:
        return ModelRef(None, name)
    backend, _, model = name.partition(":")
    backend = backend.strip().lower()
    model = model.strip()
    if backend not in BACKENDS:
        raise ValueError(
            f"unknown judge backend {backend!r}; write 'openai:<model>' (any "
            "OpenAI-compatible endpoint) or 'anthropic:<model>'"
        )
    if not model:
        raise ValueError(f"no model after {backend!r}: write '{backend}:<model>'")
    return ModelRef(backend, model)
