"""Modules and classes of `service/scorewire` stay small enough to read.

The limits are the issue's: no module over 600 lines, no class over 400. Every module of
the package is measured; one that outgrows them is split by purpose, not by size.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "service" / "scorewire"
MAX_MODULE_LINES = 600
MAX_CLASS_LINES = 400
MODULES = sorted(PACKAGE.rglob("*.py"))


def _oversized(path: Path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    found = []
    lines = len(text.splitlines())
    if lines > MAX_MODULE_LINES:
        found.append(f"the module is {lines} lines (limit {MAX_MODULE_LINES})")
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.ClassDef):
            size = (node.end_lineno or node.lineno) - node.lineno + 1
            if size > MAX_CLASS_LINES:
                found.append(f"class {node.name} is {size} lines (limit {MAX_CLASS_LINES})")
    return found


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(PACKAGE)) for p in MODULES])
def test_module_and_classes_within_limits(path: Path) -> None:
    # a module over 600 lines or a class over 400 is split by purpose
    assert _oversized(path) == []


def test_the_checker_sees_a_long_module_and_class(tmp_path: Path) -> None:
    # the test itself can fail: a 401-line class in a 601-line module is caught twice
    body = "".join(f"    x{k} = {k}\n" for k in range(400))
    big = tmp_path / "big.py"
    big.write_text("class Big:\n" + body + "\n" * 200, encoding="utf-8")
    assert _oversized(big) == [
        "the module is 601 lines (limit 600)",
        "class Big is 401 lines (limit 400)",
    ]


def test_every_part_of_the_package_is_measured() -> None:
    # a wrong PACKAGE would leave nothing to measure and the parametrized test passing empty
    parts = {p.relative_to(PACKAGE).parts[0] for p in MODULES}
    assert {"core", "checks", "engine", "server", "settings"} <= parts


MAX_SERVER_SHARE = 0.12
"""The server part (handlers, conversions, security, streaming) is at most this share of
the package's Python lines: what it does beyond converting lives in the layer that owns it."""


def _lines(paths: list[Path]) -> int:
    return sum(len(p.read_text(encoding="utf-8").splitlines()) for p in paths)


def test_the_server_part_is_a_thin_share_of_the_package() -> None:
    server = [p for p in MODULES if p.relative_to(PACKAGE).parts[0] == "server"]
    share = _lines(server) / _lines(MODULES)
    assert server, "no server modules found"
    assert share <= MAX_SERVER_SHARE, f"server/ is {share:.1%} of the lines (limit 12%)"
