"""The one rule for a missing component: a skip on a developer's machine, a failure under CI."""

from __future__ import annotations

import pytest

from tests.support.components import require_binary, require_component, under_ci


@pytest.mark.parametrize(
    ("value", "ci"),
    [
        # what GitHub Actions, GitLab CI and .ci/run set
        ("true", True),
        # other systems' spellings
        ("1", True),
        ("TRUE", True),
        ("woodpecker", True),
        # unset, empty or an explicit no: a developer's run
        (None, False),
        ("", False),
        ("false", False),
        ("0", False),
    ],
)
def test_under_ci(monkeypatch: pytest.MonkeyPatch, value: str | None, ci: bool) -> None:
    if value is None:
        monkeypatch.delenv("CI", raising=False)
    else:
        monkeypatch.setenv("CI", value)
    assert under_ci() is ci


def test_a_missing_component_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    # the skip names the component and how to get it
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match="redis-server is missing: apt-get"):
        require_component("redis-server", "apt-get install -y redis-server")


def test_a_missing_component_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="under CI every test must run"):
        require_binary("scorewire-no-such-binary", "nothing")


def test_a_present_binary_is_its_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    assert require_binary("sh", "dash").endswith("/sh")
