"""The layers of `service/scorewire` point one way, as the map in docs/development.md says.

Every import in every module (function-level ones included, since a lazy import is
still a dependency) is read from the source with `ast`; a module may import its own
package and packages of lower layers only. The domain layers never import grpc or the
generated code: only the server (and the CLI's `--server` mode) speak protobuf.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SERVICE = Path(__file__).resolve().parents[2] / "service"
PACKAGE = SERVICE / "scorewire"

# Rank of each top-level part of `scorewire`: a module may import parts of lower rank,
# and its own part. Parts of equal rank are independent of each other.
LAYERS: dict[str, int] = {
    "core": 0,
    # Settings may hold parts defined in core (a nested part: `core.judge_watch`).
    "settings": 1,
    "regex": 1,
    "schema": 2,
    "text": 2,
    "judge": 3,
    "labels": 3,
    "runs": 3,
    "checks": 4,
    "engine": 5,
    "generation": 6,
    "suites": 7,
    "metrics": 8,
    # One compiler and one executor for every entry point; its workers read and write
    # the wire format (cases in, results out), so it is the first part that may.
    "scoring": 9,
    "api": 10,
    # The results viewer reads results files and recorded runs (the scoring layer's codec).
    "viewer": 10,
    # Online evaluation: rules compiled by the scoring layer, the durable observation queue.
    "observe": 10,
    # Evaluation jobs: their durable store and the runner that scores them through the
    # scoring layer's executor and records them in the run store.
    "jobs": 10,
    "server": 11,
    "cli": 12,
}
# The generated API and the client distribution share the `scorewire` namespace.
PROTOBUF_PARTS = {"v1", "client"}
# Below this rank nothing imports grpc or the generated code.
FIRST_WIRE_RANK = LAYERS["metrics"]


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(SERVICE).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.append((".".join(parts), path))
    return out


def _imports(module: str, path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: -node.level] if node.level else []
                target = ".".join([*base, node.module or ""]).rstrip(".")
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return found


def _part(module: str) -> str:
    return module.split(".")[1]


MODULES = _modules()


def test_every_part_has_a_layer() -> None:
    # a new top-level package must be placed in the map (and docs/development.md's)
    parts = {_part(m) for m, _ in MODULES if m.count(".") >= 1}
    assert parts - LAYERS.keys() == set()


def _violations(module: str, path: Path) -> list[str]:
    if module.count(".") < 1:
        return []
    own = _part(module)
    rank = LAYERS[own]
    wrong = []
    for line, target in _imports(module, path):
        top = target.split(".")[0]
        if top == "grpc" or top == "grpc_status" or (top.startswith("google") and "rpc" in target):
            if rank < FIRST_WIRE_RANK:
                wrong.append(f"line {line}: {target} (the domain layers do not speak grpc)")
            continue
        if top != "scorewire" or target.count(".") < 1:
            continue
        part = _part(target)
        if part in PROTOBUF_PARTS:
            if rank < FIRST_WIRE_RANK:
                wrong.append(f"line {line}: {target} (generated code is for the server)")
            continue
        if part == own:
            continue
        if LAYERS[part] >= rank:
            wrong.append(f"line {line}: {target} ({part} is not below {own})")
    return wrong


@pytest.mark.parametrize(("module", "path"), MODULES, ids=[m for m, _ in MODULES])
def test_imports_point_down(module: str, path: Path) -> None:
    # a module imports its own part and lower layers only; the domain never imports grpc
    wrong = _violations(module, path)
    assert wrong == [], f"{module} imports upward:\n" + "\n".join(wrong)


def test_the_checker_sees_upward_and_wire_imports(tmp_path: Path) -> None:
    # the test itself can fail: a check importing the server, grpc or the stubs is caught
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import grpc\nfrom scorewire.v1 import scorewire_pb2\n"
        "def f():\n    from scorewire.server.app import serve\n",
        encoding="utf-8",
    )
    wrong = _violations("scorewire.checks.bad", bad)
    assert [w.split(":")[0] for w in wrong] == ["line 1", "line 2", "line 4"]
    assert _violations("scorewire.server.bad", bad) == []
