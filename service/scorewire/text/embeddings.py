"""Text embeddings for the `similarity` check, from an OpenAI-compatible endpoint.

The check finds its provider in `CheckContext.extras[EMBEDDINGS_EXTRA]`; whoever builds
the context (server, CLI) puts an `EmbeddingsClient.from_settings(settings)` there.
No local model is bundled: the packages that ship one need torch (1.5 GB), so without
an endpoint `similarity` scores an error, never a pass.
"""

from __future__ import annotations

import array
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from scorewire.core.sdk_urls import unset_empty_sdk_urls
from scorewire.core.secrets import register, scrub

if TYPE_CHECKING:
    import openai
    from scorewire.settings import Settings

EMBEDDINGS_EXTRA = "embeddings"
"""The `CheckContext.extras` key under which the embeddings provider is found."""

EMBEDDINGS_ERROR = "EMBEDDINGS_ERROR"
"""Score error code: the embeddings endpoint failed, or none is configured."""

Vector = Sequence[float]


class EmbeddingsError(Exception):
    """The endpoint could not embed the texts; the message is safe to show (no bodies,
    and scrubbed of anything shaped like a credential)."""

    def __init__(self, message: str) -> None:
        super().__init__(scrub(message))


class EmbeddingsProvider(Protocol):
    """Anything that turns texts into vectors, one per text, in order."""

    async def embed(self, texts: Sequence[str], *, timeout_s: float | None = None) -> list[Vector]:
        """Embed `texts`; raise EmbeddingsError when that is impossible."""
        ...


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity of two vectors of one length; 0 when either is all zeros."""
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(math.fsum(x * x for x in a))
    nb = math.sqrt(math.fsum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)


class EmbeddingsClient:
    """An `EmbeddingsProvider` over `POST {base_url}/embeddings` through the `openai` SDK.

    Vectors are kept in a small per-client LRU cache keyed by text, so a check's fixed
    reference is embedded once, not once per sample. Vectors are requested as floats
    (`encoding_format: float`), which every OpenAI-compatible server supports.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 30.0,
        max_retries: int = 2,
        cache_size: int = 512,
    ) -> None:
        import openai

        # Local servers (vLLM, Ollama, llama.cpp) need no key, but the SDK insists on one.
        key = api_key or ("unused" if base_url else None)
        register(key)
        unset_empty_sdk_urls()  # an empty OPENAI_BASE_URL means the default
        try:
            self._client: openai.AsyncOpenAI = openai.AsyncOpenAI(
                api_key=key, base_url=base_url, max_retries=max_retries
            )
        except openai.OpenAIError as err:
            raise ValueError(
                "the embeddings endpoint needs an API key "
                "(SCOREWIRE_EMBEDDINGS_API_KEY or OPENAI_API_KEY)"
            ) from err
        self.model = model
        self._timeout_s = timeout_s
        self._cache: OrderedDict[str, array.array[float]] = OrderedDict()
        self._cache_size = cache_size
        self._lock = threading.Lock()

    @classmethod
    def from_settings(cls, settings: Settings) -> EmbeddingsClient | None:
        """The client the settings describe, or None when no embeddings model is set.

        Raises ValueError when a model is set but no API key can be found for OpenAI.
        """
        if not settings.embeddings_model:
            return None
        key = settings.embeddings_api_key
        return cls(
            model=settings.embeddings_model,
            base_url=settings.embeddings_base_url,
            api_key=key.get_secret_value() if key is not None else None,
        )

    def _cached(self, text: str) -> array.array[float] | None:
        with self._lock:
            vec = self._cache.get(text)
            if vec is not None:
                self._cache.move_to_end(text)
            return vec

    def _remember(self, text: str, vec: array.array[float]) -> None:
        with self._lock:
            self._cache[text] = vec
            self._cache.move_to_end(text)
            while len(self._cache) > self._cache_size:
                self._cache.popitem(last=False)

    async def embed(self, texts: Sequence[str], *, timeout_s: float | None = None) -> list[Vector]:
        """Embed `texts` in one request (cached ones are not sent again)."""
        found = {t: v for t in texts if (v := self._cached(t)) is not None}
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            vectors = await self._request(missing, timeout_s)
            for text, vec in zip(missing, vectors, strict=True):
                found[text] = vec
                self._remember(text, vec)
        return [found[t] for t in texts]

    async def _request(self, texts: list[str], timeout_s: float | None) -> list[array.array[float]]:
        import openai

        timeout = self._timeout_s if timeout_s is None else min(timeout_s, self._timeout_s)
        try:
            resp = await self._client.embeddings.create(
                model=self.model, input=texts, encoding_format="float", timeout=timeout
            )
        except openai.APITimeoutError:
            raise EmbeddingsError("the embeddings endpoint timed out") from None
        except openai.APIStatusError as err:
            # Never repeat the body: servers echo keys and inputs in error messages.
            raise EmbeddingsError(
                f"the embeddings endpoint answered HTTP {err.status_code}"
            ) from None
        except openai.APIConnectionError:
            raise EmbeddingsError("the embeddings endpoint could not be reached") from None
        except openai.OpenAIError:
            raise EmbeddingsError("the embeddings endpoint sent an unreadable answer") from None
        return _vectors(resp, len(texts))


def _vectors(resp: object, n: int) -> list[array.array[float]]:
    data = getattr(resp, "data", None)
    if not isinstance(data, list) or len(data) != n:
        raise EmbeddingsError(f"the embeddings endpoint did not return {n} vectors")
    out: list[array.array[float] | None] = [None] * n
    dims = None
    for item in data:
        index, vec = getattr(item, "index", None), getattr(item, "embedding", None)
        if not isinstance(index, int) or not 0 <= index < n or not isinstance(vec, list):
            raise EmbeddingsError("the embeddings endpoint returned a malformed vector")
        try:
            values = array.array("d", vec)
        except TypeError:
            raise EmbeddingsError("the embeddings endpoint returned a non-numeric vector") from None
        if not values or (dims is not None and len(values) != dims):
            raise EmbeddingsError("the embeddings endpoint returned vectors of unequal length")
        dims = len(values)
        out[index] = values
    if any(v is None for v in out):
        raise EmbeddingsError("the embeddings endpoint returned duplicate vector indexes")
    return [v for v in out if v is not None]
