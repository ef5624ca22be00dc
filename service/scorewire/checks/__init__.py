"""Built-in check families. Importing this package registers every built-in type.

A newcomer adds a check by adding a module here and naming it below;
`tests/checks/test_registry.py` then requires its description, family and documented
parameters.
"""

from importlib import import_module

# Families register themselves at import.
_FAMILIES = (
    "deterministic",
    "safety",
    "trajectory",
    "compact",
    "judge",
    "rag",
    "comparison",
    "human",
    "text_metrics",
    "judge_assertions",
)

for _family in _FAMILIES:
    import_module(f"{__name__}.{_family}")
