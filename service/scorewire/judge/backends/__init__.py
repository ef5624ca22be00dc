"""Judge backends: OpenAI-compatible chat completions and the Anthropic Messages API."""

from scorewire.judge.backends.base import BackendError, Completion, JudgeBackend

__all__ = ["BackendError", "Completion", "JudgeBackend"]
