"""An empty provider base-URL variable means unset, as every URL setting of ours does.

The providers' SDKs read their own base-URL variables when given no base URL, and take
an empty `OPENAI_BASE_URL` as the URL itself: every call then fails (compose's
`OPENAI_BASE_URL: ${OPENAI_BASE_URL:-}` sets exactly that when the shell lacks it).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

SDK_URL_VARIABLES = ("OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "GEMINI_BASE_URL")
"""The providers' SDKs' own base-URL variables."""


def unset_empty_sdk_urls(environ: MutableMapping[str, str] = os.environ) -> list[str]:
    """Remove the SDK base-URL variables that are set but empty, and name them.

    Called at the start of every `scorewire` command and before any SDK client is made
    (judge backends, generation providers, the embeddings client), so the in-process API
    (`scorewire.api`) gets it too; the processes started after it inherit the cleaned
    environment."""
    empty = [name for name in SDK_URL_VARIABLES if name in environ and not environ[name].strip()]
    for name in empty:
        del environ[name]
    return empty
