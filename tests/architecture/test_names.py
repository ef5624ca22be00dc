"""A module's name says its role: two packages use one module name only for one role.

`model.py`, `runner.py` and `jobs.py` each came to mean two unrelated things once (a
case runner and a job runner, two `Job` classes); a name that appears in more than one
package is listed here with the role it has in every one of them, or renamed.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "service" / "scorewire"

SAME_ROLE = {
    "postgres.py": "a store's PostgreSQL backend (labels, runs, jobs)",
    "sqlite.py": "a store's SQLite backend (labels, runs, jobs)",
    "sql.py": "the SQL statements its SQLite and PostgreSQL backends share (runs, jobs)",
    "wire.py": "the package's protobuf conversions (scoring, observe)",
    "observe.py": "the online-evaluation part of a layer (metrics, settings)",
}


def shared_names(root: Path) -> dict[str, list[str]]:
    """Module file names used in more than one package below `root`, with the packages."""
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        if path.name != "__init__.py" and path.parent != root:
            where[path.name].append(str(path.parent.relative_to(root)))
    return {name: dirs for name, dirs in where.items() if len(dirs) > 1}


def test_a_module_name_in_two_packages_has_one_role() -> None:
    unexplained = {n: d for n, d in shared_names(PACKAGE).items() if n not in SAME_ROLE}
    assert unexplained == {}, "rename these, or say in SAME_ROLE what they share"


def test_the_check_sees_a_name_used_twice(tmp_path: Path) -> None:
    for part in ("a", "b"):
        (tmp_path / part).mkdir()
        (tmp_path / part / "model.py").write_text("", encoding="utf-8")
    assert shared_names(tmp_path) == {"model.py": ["a", "b"]}
