"""An empty `OPENAI_BASE_URL` (or Anthropic's) means the SDK's default endpoint for the
in-process API too, not only for `scorewire` commands: every SDK client scorewire makes
clears the empty variable first (the SDKs took the empty value as the URL itself)."""

from __future__ import annotations

import pytest
from scorewire.judge.backends.anthropic_backend import AnthropicBackend
from scorewire.judge.backends.openai_backend import OpenAIBackend
from scorewire.text.embeddings import EmbeddingsClient


def test_empty_base_url_variables_give_the_sdks_default_endpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "  ")
    openai = OpenAIBackend(api_key="sk-test-0123456789", base_url=None)
    assert str(openai._client.base_url) == "https://api.openai.com/v1/"
    anthropic = AnthropicBackend(api_key="sk-ant-test-0123456789")
    assert str(anthropic._client.base_url) == "https://api.anthropic.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    embeddings = EmbeddingsClient(model="text-embedding-3-small", api_key="sk-test-0123456789")
    assert str(embeddings._client.base_url) == "https://api.openai.com/v1/"


def test_a_set_base_url_variable_is_left_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    openai = OpenAIBackend(api_key="sk-test-0123456789", base_url=None)
    assert str(openai._client.base_url) == "http://127.0.0.1:9/v1/"
