"""The documentation site builds strictly, so a broken link or anchor fails `make test`,
and no page uses internal names (the product's words only)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from scripts.docs_reference import PAGES, page
from tests.support.servers import ROOT

MKDOCS = Path(sys.executable).parent / "mkdocs"
# Names of the documents the formats came from, and of past work: a reader knows neither.
INTERNAL = re.compile(r"\b(seed \d{3}|issue \d+)\b", flags=re.I)


def _build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    if not MKDOCS.exists():
        pytest.fail(f"{MKDOCS} is missing: make install installs the docs extra")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    return subprocess.run(
        [str(MKDOCS), "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_the_site_builds_strictly_with_every_page(tmp_path: Path) -> None:
    started = time.monotonic()
    done = _build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    assert time.monotonic() - started < 20
    for uri in ("getting-started", "reference/checks", "reference/settings", "reference/api"):
        assert (tmp_path / "site" / uri / "index.html").is_file(), uri


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    # The same configuration over a copy of the pages with one link to nowhere.
    docs = tmp_path / "docs"
    shutil.copytree(ROOT / "docs", docs)
    (docs / "concepts.md").write_text(
        (docs / "concepts.md").read_text(encoding="utf-8") + "\nSee [nowhere](nowhere.md).\n",
        encoding="utf-8",
    )
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    config["docs_dir"] = str(docs)
    config["hooks"] = [str(ROOT / h) for h in config["hooks"]]
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = _build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0
    assert "nowhere.md" in done.stderr


def test_no_page_uses_internal_names() -> None:
    texts = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "docs").rglob("*.md")}
    texts["README.md"] = (ROOT / "README.md").read_text(encoding="utf-8")
    texts.update({uri: page(uri) for uri in PAGES})
    found = {name: INTERNAL.findall(text) for name, text in texts.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_every_page_is_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    pages = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert {p for p in pages | set(PAGES) if p not in nav} == set()


def test_the_checks_page_names_only_check_types_that_exist() -> None:
    # The families' summary is written by hand; the catalog is generated. A type renamed
    # or removed in the registry must not live on in the summary.
    import scorewire.checks  # noqa: F401 - registers the built-in check types
    from scorewire.core.registry import REGISTRY

    text = (ROOT / "docs" / "checks.md").read_text(encoding="utf-8")
    summary = text[text.index("## Families") : text.index("## Two ways")]
    names = {n for line in summary.splitlines() for n in re.findall(r"`([a-z_.]+)`", line)}
    known = {t.name for t in REGISTRY.types()} | {a for t in REGISTRY.types() for a in t.aliases}
    assert names - known == set()
