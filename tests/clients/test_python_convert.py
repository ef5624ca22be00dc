"""The Python client's conversion of plain cases into Case messages."""

from __future__ import annotations

import pytest
from scorewire.client import _convert


def test_a_plain_case_names_a_checkllm_combination() -> None:
    case = _convert.to_case({"test": "Italy", "prompt": 1, "provider": "echo", "output": "Rome"})
    assert (case.test, case.prompt, case.provider) == ("Italy", "1", "echo")
    assert case.output.text == "Rome"
    first = _convert.to_case({"test": 0, "prompt": 0, "provider": "echo", "output": "Rome"})
    assert (first.test, first.prompt) == ("0", "0")  # index 0 names the first one
    plain = _convert.to_case({"sample": {"id": "a"}, "output": "x"})
    assert (plain.test, plain.prompt, plain.provider) == ("", "", "")
    with pytest.raises(TypeError, match="unknown key"):
        _convert.to_case({"output": "x", "tests": "0"})
