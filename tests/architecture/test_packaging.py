"""The server's distribution installs on its own, with nothing of ours from an index.

It used to require `scorewire-client` by bare name: a name not on PyPI, so `pip install .`
failed outside `make`, and anyone registering it would have been installed (dependency
confusion). The server wheel now carries the Python client itself. These checks read
the pyproject files; `make test-install` builds the wheels and installs them with the
index off.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _project(path: str) -> dict[str, object]:
    with (ROOT / path).open("rb") as f:
        data = tomllib.load(f)
    return data


def _names(requirements: list[str]) -> set[str]:
    """Normalized distribution names of PEP 508 requirements."""
    return {
        re.split(r"[\s\[<>=!~;@]", r, maxsplit=1)[0].lower().replace("_", "-") for r in requirements
    }


def test_server_requires_no_distribution_of_ours() -> None:
    deps = _project("pyproject.toml")["project"]["dependencies"]  # type: ignore[index]
    assert not {n for n in _names(deps) if n.startswith("scorewire")}


def test_server_wheel_carries_the_client_and_its_stubs() -> None:
    wheel = _project("pyproject.toml")["tool"]["hatch"]["build"]["targets"]["wheel"]  # type: ignore[index]
    assert "clients/python/src/scorewire" in wheel["only-include"]
    # An editable install puts the client's source on the path rather than a copy.
    assert "clients/python/src" in wheel["dev-mode-dirs"]


def test_server_requires_every_runtime_dependency_of_the_client_it_carries() -> None:
    server = _names(_project("pyproject.toml")["project"]["dependencies"])  # type: ignore[index]
    client = _names(_project("clients/python/pyproject.toml")["project"]["dependencies"])  # type: ignore[index]
    assert client <= server, client - server
