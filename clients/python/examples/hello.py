"""Score an answer with three deterministic checks on a scorewire server."""

import os

from scorewire.client import Client

checks = [
    {"type": "contains", "params": {"needles": ["Paris", "France"]}},  # value: share found
    {"type": "regex", "params": {"pattern": r"\bcapital\b", "flags": ["IGNORECASE"]}},
    {"type": "length", "params": {"max_chars": 40}},
]
with Client(os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")) as client:
    response = client.score("Lyon is the capital of France.", checks=checks)
    for s in response.scores:
        print(f"{s.name:<9} {'pass' if s.passed else 'fail'} {s.value:.2f}")
    print("passed:", str(response.passed).lower())
