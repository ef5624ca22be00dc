"""What a starting server chose, in one log line an operator can read: processes and
workers, memory bounds, stores, TLS and tokens, the native kernel, the viewer and metrics.

Secrets never appear: a store URL is shown as its scheme, host and database only.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import SecretStr
from scorewire.core.cgroup import read_limits
from scorewire.core.postgres_calls import store_address
from scorewire.engine import native
from scorewire.settings import Settings

MIB = 1024 * 1024


def _store(url: SecretStr | None, file: Path) -> str:
    return store_address(url.get_secret_value()) if url is not None else f"sqlite {file}"


def chosen(settings: Settings, *, scoring_workers: int, tokens: int, cache: str, queue: str) -> str:
    """The line's text (after "serving on HOST:PORT (pid N)"); `cache` and `queue` are the
    verdict cache's and the observation queue's own descriptions (no credentials)."""
    tls = "off"
    if settings.tls_cert:
        tls = "on, client certificates required" if settings.tls_client_ca else "on"
    kernel = "off (SCOREWIRE_NATIVE_KERNEL)" if not settings.native_kernel else "native"
    if settings.native_kernel and not native.available():
        kernel = "Python (the native kernel is not installed)"
    viewer = (
        "off" if settings.viewer_port is None else f"{settings.viewer_host}:{settings.viewer_port}"
    )
    metrics = f":{settings.metrics_port}" if settings.metrics_enabled else "off"
    parts = [
        f"processes {settings.workers}",
        f"limits {read_limits().describe()}",
        f"scoring workers {scoring_workers} per process"
        f" (at most {settings.scoring_worker_max_rss_mb} MB each)",
        f"requests in flight at most {settings.max_bytes_in_flight // MIB} MiB"
        f" ({settings.max_bytes_in_flight_per_tenant // MIB} MiB per tenant)",
        f"verdict cache {cache}",
        f"labels {_store(settings.labels_url, settings.labels_file())}",
        f"runs {_store(settings.runs_url, settings.runs_file())}",
        f"observe queue {queue}",
        f"TLS {tls}",
        f"tokens {tokens if tokens else 'off (every caller is let in)'}",
        f"scoring {kernel}",
        f"viewer {viewer}",
        f"metrics {metrics}",
    ]
    return "; ".join(parts)
