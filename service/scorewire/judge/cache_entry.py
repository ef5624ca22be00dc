"""A verdict cache entry: its key and the stored form of a judge's raw answer.

The key covers the prompt version, the fully rendered prompt, the backend, the model
and the sampling parameters; the value is the judge's raw answer and its token counts.
Storing the raw answer (not a score) means a changed threshold or pass_level is applied
to the cached answer for free. Only answers that parsed as a verdict are stored: errors
never are.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from scorewire.judge.prompts import PROMPT_VERSION, Prompt

NAMESPACE = "scorewire:verdict:"
"""Prefix of every cache key (so a shared Redis can hold other things too)."""


def verdict_key(
    prompt: Prompt,
    *,
    backend: str,
    model: str,
    temperature: float,
    max_tokens: int,
    sample: int = 0,
) -> str:
    """sha256 over the prompt version, the rendered prompt, backend, model and sampling.

    `sample` (the index of a repeated sample) is part of the material only when it is
    above 0, so sample 0 keeps the key every verdict had before repeated sampling and
    existing caches stay valid.
    """
    sampling: dict[str, Any] = {"temperature": temperature, "max_tokens": max_tokens}
    if sample:
        sampling["sample"] = sample
    material = json.dumps(
        [
            PROMPT_VERSION,
            prompt.kind,
            prompt.system,
            prompt.user,
            prompt.schema_name,
            prompt.schema,
            backend,
            model,
            sampling,
        ],
        ensure_ascii=False,
        sort_keys=True,
        separators=(",", ":"),
    )
    return hashlib.sha256(material.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class CachedAnswer:
    """A judge's raw answer as stored, and who paid for it."""

    text: str
    input_tokens: int | None
    output_tokens: int | None
    tenant: str | None = None
    """The tenant whose call produced the answer; None when unknown (in-process callers,
    no authentication, or entries written before tenants were recorded)."""
    model: str = ""
    """The model the provider reported answering; empty when unknown (entries written
    before it was recorded)."""
    at: float | None = field(default=None, compare=False)
    """When the judge answered, in seconds since the epoch; None when unknown (entries
    written before it was recorded). A request that asks the judges again reads only
    entries answered since it began (`CheckContext.fresh_since`). Not part of equality:
    two entries with the same answer are the same answer."""

    def dumps(self) -> str:
        """The stored form (version 1; `t`, `m` and `at` are present only when the tenant,
        the reported model and the time of the answer are known)."""
        obj: dict[str, Any] = {
            "v": 1,
            "text": self.text,
            "in": self.input_tokens,
            "out": self.output_tokens,
        }
        if self.tenant is not None:
            obj["t"] = self.tenant
        if self.model:
            obj["m"] = self.model
        if self.at is not None:
            obj["at"] = self.at
        return json.dumps(obj, separators=(",", ":"))

    @staticmethod
    def loads(raw: str) -> CachedAnswer | None:
        """Read the stored form; None for anything unreadable (treated as a miss)."""
        try:
            obj = json.loads(raw)
        except (TypeError, ValueError):
            return None
        if not isinstance(obj, dict) or obj.get("v") != 1 or not isinstance(obj.get("text"), str):
            return None
        in_tok, out_tok, tenant, model = obj.get("in"), obj.get("out"), obj.get("t"), obj.get("m")
        at = obj.get("at")
        return CachedAnswer(
            obj["text"],
            in_tok if isinstance(in_tok, int) else None,
            out_tok if isinstance(out_tok, int) else None,
            tenant if isinstance(tenant, str) else None,
            model if isinstance(model, str) else "",
            float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None,
        )

    def answered_since(self, since: float) -> bool:
        """Whether the judge gave this answer at or after `since` (seconds since the
        epoch); an entry that does not say when is older than any `since`."""
        return self.at is not None and self.at >= since
