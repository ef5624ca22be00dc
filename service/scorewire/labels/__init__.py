"""Human labels: the label model, the JSONL format, and the service's label stores.

`open_label_store(settings)` opens the store the settings name: PostgreSQL when
`labels_url` is set (shared by replicas), else the SQLite file at `labels_path`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from scorewire.labels.label_model import (
    DEFAULT_CHECK,
    NO_LABEL_REASON,
    Label,
    LabelQuery,
    LabelsOutcomeUnknown,
    LabelStore,
    LabelsUnavailable,
    PutKey,
    RequestIdReused,
    Verdict,
    labelled_text,
    output_hash,
    verdict,
)

if TYPE_CHECKING:  # checks import this package; settings stay out of their imports
    from scorewire.settings import Settings

__all__ = [
    "DEFAULT_CHECK",
    "NO_LABEL_REASON",
    "Label",
    "LabelQuery",
    "LabelStore",
    "LabelsOutcomeUnknown",
    "LabelsUnavailable",
    "PutKey",
    "RequestIdReused",
    "Verdict",
    "labelled_text",
    "open_label_store",
    "output_hash",
    "verdict",
]


async def open_label_store(settings: Settings) -> LabelStore:
    """The label store the settings name; LabelsUnavailable when SQLite cannot be opened.

    A PostgreSQL store opens even when the database is down (calls fail until it is
    back); psycopg is imported only when PostgreSQL is configured. For SQLite the file's
    directory (the state directory by default) is created first; a failure's message is
    one line for the operator, naming the setting to change.
    """
    if settings.labels_url is not None:
        from scorewire.labels.postgres import PostgresLabelStore

        return await PostgresLabelStore.open(
            settings.labels_url.get_secret_value(), timeout_s=settings.store_timeout_s
        )
    from scorewire.labels.sqlite import SqliteLabelStore

    try:
        path = settings.labels_file()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return await SqliteLabelStore.open(str(path))
    except (OSError, RuntimeError, LabelsUnavailable) as err:
        # RuntimeError: Path.home() when no home directory can be determined.
        raise LabelsUnavailable(_cannot_open(settings, err)) from None


def _cannot_open(settings: Settings, err: Exception) -> str:
    reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
    reason = reason.removeprefix("the label store failed: ")
    if Path(settings.labels_path).expanduser().is_absolute():
        fix = "set SCOREWIRE_LABELS_PATH to a file in a directory this user can write"
    else:
        fix = "set SCOREWIRE_STATE_DIR to a directory this user can write"
    try:
        where = str(settings.labels_file())
    except RuntimeError:
        where = f"{settings.labels_path} under the state directory"
    return (
        f"cannot open the label store {where} as uid {os.getuid()} ({reason}): "
        f"{fix}, or keep labels in PostgreSQL with SCOREWIRE_LABELS_URL"
    )
