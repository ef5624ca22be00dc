"""Built-in check families. Importing this package registers every built-in type."""

from importlib import import_module

# Families register themselves at import. A family that is not written yet is skipped
# rather than breaking every other check.
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
    try:
        import_module(f"{__name__}.{_family}")
    except ModuleNotFoundError as _err:  # pragma: no cover - transitional
        if _err.name != f"{__name__}.{_family}":
            raise
