"""Former home of the in-process API, kept so that existing imports keep working.

The API moved to `scorewire.api` (it loads suite files, so it sits above the suite
formats). This module only re-exports it; the layer test allows this one upward import.
"""

from scorewire.api import (
    CheckLike,
    arun_suite_file,
    ascore,
    compile_plan,
    run_suite_file,
    score,
)

__all__ = ["CheckLike", "arun_suite_file", "ascore", "compile_plan", "run_suite_file", "score"]
