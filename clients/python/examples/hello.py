"""Score two answers with three deterministic checks on a scorewire server."""

import os

from scorewire.client import Client

ADDRESS = os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")
CHECKS = [
    {"type": "contains", "params": {"needles": ["Paris", "France"]}},  # value: share found
    {"type": "regex", "params": {"pattern": r"\bcapital\b", "flags": ["IGNORECASE"]}},
    {"type": "length", "params": {"max_chars": 40}},
]
ANSWERS = {
    "q1": "The capital of France is Paris.",
    "q2": "Lyon is the capital of France, I think, but I am not sure.",
}


def verdict(passed: bool) -> str:
    return "pass" if passed else "fail"


with Client(ADDRESS) as client:
    for sample_id, answer in ANSWERS.items():
        response = client.score(answer, sample={"id": sample_id}, checks=CHECKS)
        print(f"{sample_id}: {verdict(response.passed)}")
        for score in response.scores:
            print(f"  {score.name:<9} {verdict(score.passed)} {score.value:.2f}")
