"""scorewire's native scoring kernel (Rust): see `scorewire.engine.native`."""

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from scorewire.core.twin import Twin

ScoreCounts = tuple[int, int, list[tuple[int, int, int, int, float, float, int, int]]]
TallyCounts = tuple[int, list[int], list[int], list[float], list[int], list[tuple[int, str]]]

class NativePlan:
    """A plan's checks, ready to score batches natively."""

    def __init__(
        self,
        checks: Sequence[tuple[str, str, Twin | None, Any]],
        run_check: Callable[..., Any],
        ctx: Any,
        score_cls: type,
        case_result_cls: type,
        spread_bytes: Callable[..., bytes],
        known_codes: Sequence[str],
        max_needles: int | None,
        max_needle_chars: int | None,
        max_reason_chars: int,
        char_facts: Callable[[str], tuple[str, bool, int]],
    ) -> None: ...
    @property
    def fills_objects(self) -> bool:
        """Whether Score and CaseResult objects are filled directly, not made by their classes."""
    @property
    def native_checks(self) -> int:
        """How many checks have a native twin."""
    def score_wire(
        self,
        cases: list[bytes],
        first: int,
        python_case: Callable[[bytes, int], Any],
        progress: int,
        deadline: float | None,
        skip: dict[int, dict[int, str]],
        killed: Callable[[str], Any],
        bounds_ms: list[float] | None,
    ) -> tuple[bytes, ScoreCounts, TallyCounts | None]:
        """Score serialized Case messages into a serialized RunSuiteResponse."""
    def score_one(
        self,
        request: bytes,
        python_case: Callable[[], Any],
        ctx: Any,
        bounds_ms: list[float] | None,
    ) -> tuple[bytes, TallyCounts | None]:
        """Score a serialized ScoreRequest's output into a serialized ScoreResponse."""
    def score_objects(
        self, cases: Iterable[Any], convert: Callable[[Any, int], Any]
    ) -> tuple[list[Any], ScoreCounts]:
        """Score run_batch's cases into CaseResult objects."""

def twin_fields() -> dict[str, list[tuple[str, str]]]:
    """Each kind of twin and the fields the kernel reads of its description, with the
    Python types it reads them as."""

def read_case(
    data: bytes, score_request: bool = False
) -> tuple[str, str, bool, tuple[bool, Any]] | None:
    """What the kernel reads of a serialized Case (or ScoreRequest): sample id, output
    text, whether the output has a JSON value, and (True, expected) or (False, None); None
    when it leaves the message to Python."""

def plain_case_ok(data: bytes | memoryview, short: int) -> bool:
    """Whether a serialized Case certainly passes the server's check of a RunSuite case
    (it parses, its output text is within `short` bytes, its JSON-text fields are JSON);
    False leaves the case to Python's check."""
