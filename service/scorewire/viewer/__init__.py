"""The results viewer: runs, their cases and comparisons as web pages.

- `RunSource` (`source`): the read interface the pages need; `ResultsFile` and
  `ResultsDirectory` implement it over `scorewire run --output` files.
- `render`: the pages as self-contained HTML (inline CSS and JS, nothing fetched),
  served or written as one offline report (`scorewire view`).
- `serving`: the served viewer on its own HTTP port (`SCOREWIRE_VIEWER_PORT`), behind the
  server's bearer tokens when auth is on; `handler` answers its requests (routes,
  sign-in, CSRF) and `sessions` holds its tokens and signed-in browsers.

It reads results and settings only: no grpc, no engine.
"""

from scorewire.viewer.run_views import compare_runs, prompt_matrix
from scorewire.viewer.source import (
    InvalidResults,
    ResultsDirectory,
    ResultsFile,
    RunSource,
)
from scorewire.viewer.view_model import (
    CaseChange,
    CaseResult,
    CheckDelta,
    CheckStats,
    Comparison,
    RunDetail,
    RunInfo,
    RunNotFound,
    ScoreResult,
)

__all__ = [
    "CaseChange",
    "CaseResult",
    "CheckDelta",
    "CheckStats",
    "Comparison",
    "InvalidResults",
    "ResultsDirectory",
    "ResultsFile",
    "RunDetail",
    "RunInfo",
    "RunNotFound",
    "RunSource",
    "ScoreResult",
    "compare_runs",
    "prompt_matrix",
]
