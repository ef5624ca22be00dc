"""A suite document's YAML text as data, within the size limits of the request.

Both formats (`evalstone`, `checkllm`) read their documents here: the text is refused past
`max_suite_bytes` before it is parsed, `bounded_yaml` loads it within the expansion limits,
and every problem becomes a `SpecError` with the line and column, or a `LimitExceeded`
naming the setting passed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from scorewire.core.cost import LimitExceeded, current_meter
from scorewire.core.errors import SpecError
from scorewire.engine.metering import SUITE_BYTES, SUITE_NODES, SUITE_TEXT_BYTES
from scorewire.settings import Settings
from scorewire.suites import bounded_yaml


@dataclass(frozen=True, slots=True)
class Parsed:
    """A document already parsed (its format read from it), handed to its loader so the
    text is not parsed twice."""

    data: Any


MAX_YAML_BYTES: int = Settings.model_fields[SUITE_TEXT_BYTES].default
"""The largest suite document without a meter (the CLI): the server's default."""


def parse_yaml(text: str) -> Any:
    """YAML text -> data; syntax errors become a SpecError with line and column.

    The document may be as large as, and its aliases may expand it only within, the
    current meter's limits (`max_suite_bytes`, `max_suite_expanded_bytes`,
    `max_suite_expanded_nodes`): past one, `LimitExceeded` names it, since the document
    is too big rather than wrong. Without a meter (the CLI, the in-process API) the
    settings' defaults bound it, as a SpecError.
    """
    meter = current_meter()
    limits = meter.limits if meter is not None else {}
    most = limits.get(SUITE_TEXT_BYTES, MAX_YAML_BYTES)
    if suite_over(text, most):
        if meter is None:
            raise SpecError.at("", suite_over_message(most))
        raise LimitExceeded(SUITE_TEXT_BYTES, "", suite_over_message(most))
    try:
        return bounded_yaml.load(
            text,
            max_nodes=limits.get(SUITE_NODES, bounded_yaml.MAX_EXPANDED_NODES),
            max_bytes=limits.get(SUITE_BYTES, bounded_yaml.MAX_EXPANDED_BYTES),
        )
    except bounded_yaml.ExpansionTooLarge as err:
        setting = SUITE_NODES if err.what == "nodes" else SUITE_BYTES
        message = f"{err.problem} ({setting}){_where(err)}"
        if meter is None:
            raise SpecError.at("", message) from None
        raise LimitExceeded(setting, "", message) from None
    except yaml.MarkedYAMLError as err:
        raise SpecError.at("", f"invalid YAML{_where(err)}: {err.problem}") from None
    except yaml.YAMLError as err:
        raise SpecError.at("", f"invalid YAML: {err}") from None
    except ValueError as err:
        # PyYAML's scanner lets a few bad escapes out as plain ValueErrors
        # (`"\U00110000"`: a code point beyond Unicode): still the caller's bad YAML.
        raise SpecError.at("", f"invalid YAML: {err}") from None


def suite_over(text: str, most: int) -> bool:
    """Whether `text` is over `most` bytes of UTF-8, encoded only when its length alone
    does not say (a character is 1 to 4 bytes)."""
    if len(text) > most:
        return True
    return len(text) * 4 > most and len(text.encode("utf-8", "surrogatepass")) > most


def suite_over_message(most: int) -> str:
    """Why a suite document over `max_suite_bytes` (`most`) is refused."""
    return f"the suite is larger than {SUITE_TEXT_BYTES} ({most:,} bytes)"


def _where(err: yaml.MarkedYAMLError) -> str:
    mark = err.problem_mark
    return f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
