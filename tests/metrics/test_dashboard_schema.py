"""The Grafana dashboard against Grafana's published dashboard schema, and its layout.

Grafana publishes the dashboard JSON model as TypeScript types in `@grafana/schema`
(npm, Apache-2.0, generated from its CUE schema; no JSON Schema ships in any registry
package). The dashboard is checked by compiling it as an object literal that `satisfies
Dashboard` with `tsc --strict`: a wrong type or an unknown property fails the build.
`scripts/install_test_deps.sh` installs both, pinned, into `.tools/grafana-schema`.
"""

from __future__ import annotations

import copy
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.metrics.helpers import DEPLOY, ROOT
from tests.support.components import require_component

DASHBOARD = DEPLOY / "grafana/dashboards/scorewire.json"
MODULES = ROOT / ".tools" / "grafana-schema" / "node_modules"


def _tsc() -> Path:
    tsc = MODULES / ".bin" / "tsc"
    if not tsc.exists() or not (MODULES / "@grafana" / "schema").exists():
        require_component(
            "@grafana/schema", "not in .tools/grafana-schema (scripts/install_test_deps.sh)"
        )
    return tsc


def schema_errors(doc: dict[str, Any], work: Path) -> str:
    """tsc's complaints about `doc` as a `Dashboard` of @grafana/schema ('' when none)."""
    tsc = _tsc()
    source = work / "dashboard.ts"
    source.write_text(
        'import type { Dashboard } from "@grafana/schema";\n'
        f"export const dashboard = {json.dumps(doc, indent=2)} satisfies Dashboard;\n"
    )
    types = MODULES / "@grafana" / "schema" / "dist" / "types" / "index.d.ts"
    config = {
        "compilerOptions": {
            "strict": True,
            "noEmit": True,
            "module": "nodenext",
            "moduleResolution": "nodenext",
            "target": "es2022",
            "skipLibCheck": True,
            "types": [],
            "paths": {"@grafana/schema": [str(types)]},
        },
        "files": [str(source)],
    }
    (work / "tsconfig.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(tsc), "-p", str(work / "tsconfig.json")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return "" if done.returncode == 0 else done.stdout + done.stderr


def _dashboard() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return doc


def test_the_dashboard_satisfies_grafanas_published_schema(tmp_path: Path) -> None:
    # Every property known to the schema and of its type.
    assert schema_errors(_dashboard(), tmp_path) == ""


@pytest.mark.parametrize(
    ("path", "value", "complaint"),
    [
        # a number where the schema wants one: a string is refused
        (("panels", 1, "gridPos", "h"), "4", "not assignable to type 'number'"),
        # a property the schema does not know (a misspelt key) is refused
        (("templating", "list", 1, "multiple"), True, "'\"multiple\"' does not exist"),
    ],
)
def test_the_schema_check_refuses_a_broken_dashboard(
    tmp_path: Path, path: tuple[Any, ...], value: Any, complaint: str
) -> None:
    # The check itself: it fails on the mistakes it is there for.
    doc = copy.deepcopy(_dashboard())
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert complaint in schema_errors(doc, tmp_path)


def test_panels_fit_the_grid_and_do_not_overlap() -> None:
    # Grafana's grid is 24 columns; overlapping panels are moved about on load.
    taken: dict[tuple[int, int], str] = {}
    for panel in _dashboard()["panels"]:
        pos = panel["gridPos"]
        assert pos["w"] >= 1 and pos["h"] >= 1 and pos["x"] >= 0 and pos["y"] >= 0, panel["title"]
        assert pos["x"] + pos["w"] <= 24, panel["title"]
        for x in range(pos["x"], pos["x"] + pos["w"]):
            for y in range(pos["y"], pos["y"] + pos["h"]):
                assert (x, y) not in taken, f"{panel['title']} overlaps {taken[(x, y)]}"
                taken[(x, y)] = panel["title"]


def test_every_panel_has_a_title_a_description_and_distinct_query_ids() -> None:
    # What a reader sees on hover, and refIds Grafana needs distinct within a panel.
    doc = _dashboard()
    assert doc["uid"] and doc["title"] and isinstance(doc["schemaVersion"], int)
    for panel in doc["panels"]:
        assert panel["title"]
        if panel["type"] == "row":
            continue
        assert panel.get("description"), panel["title"]
        ref_ids = [t["refId"] for t in panel["targets"]]
        assert len(ref_ids) == len(set(ref_ids)), panel["title"]
