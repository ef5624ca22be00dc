"""What the server's observe rule `clients` (tests/clients/observe_rules.yaml) has scored."""

from __future__ import annotations

from scorewire.client import Client


def scored(client: Client) -> dict[str, bool]:
    """Sample id -> passed, for every observation the rule `clients` has scored."""
    seen: dict[str, bool] = {}
    for run in client.list_runs(labels={"observe_rule": "clients"}).runs:
        token = ""
        while True:
            page = client.list_run_results(run.run_id, page_size=1000, page_token=token)
            seen.update((r.result.sample_id, r.result.passed) for r in page.results)
            token = page.next_page_token
            if not token:
                break
    return seen
