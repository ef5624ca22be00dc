"""The README's configuration table lists every setting of `settings.py` with its default."""

from __future__ import annotations

import re
from typing import Any

from scorewire.settings import Settings

from tests.support.servers import ROOT


def _shown(default: Any) -> str:
    """A default as the table writes it."""
    if default is None:
        return "unset"
    if isinstance(default, bool):
        return f"`{str(default).lower()}`"
    if isinstance(default, str):
        return f"`{default}`" if default else "empty"
    if isinstance(default, list | tuple | dict) and not default:
        return "`[]`" if not isinstance(default, dict) else "`{}`"
    return f"`{default}`"


def _table() -> dict[str, str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## Configuration\n") : text.index("## Development\n")]
    rows = re.findall(r"^\| `(SCOREWIRE_\w+)` \| ([^|]+) \|", section, flags=re.M)
    return {name: default.strip() for name, default in rows}


def test_every_setting_is_in_the_table_with_its_default_and_nothing_else() -> None:
    # Before: the README gave SCOREWIRE_PORT's default as 127.0.0.1:50051 and listed a few.
    expected = {
        f"SCOREWIRE_{name.upper()}": _shown(field.get_default(call_default_factory=True))
        for name, field in Settings.model_fields.items()
    }
    assert _table() == expected


def test_the_table_says_port_is_a_number() -> None:
    # The form a user copies must be one the server accepts.
    assert _table()["SCOREWIRE_PORT"] == "`50051`"
    Settings(port=int(_table()["SCOREWIRE_PORT"].strip("`")))
