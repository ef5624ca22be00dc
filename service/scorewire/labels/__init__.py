"""Human labels: the label model, the JSONL format, and the service's label stores.

`open_label_store(settings)` opens the store the settings name: PostgreSQL when
`labels_url` is set (shared by replicas), else the SQLite file at `labels_path`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from scorewire.labels.model import (
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
    back); psycopg is imported only when PostgreSQL is configured.
    """
    if settings.labels_url is not None:
        from scorewire.labels.postgres import PostgresLabelStore

        return await PostgresLabelStore.open(settings.labels_url.get_secret_value())
    from scorewire.labels.sqlite import SqliteLabelStore

    return await SqliteLabelStore.open(settings.labels_path)
