"""Hand each answer to scorewire for online evaluation; observe() never blocks or raises."""

import os

from scorewire.client import Client, Observer


def answer(observer: Observer, question: str) -> str:
    """A request handler: answer, then observe (it returns at once)."""
    text = "Paris is the capital of France."  # your model's output
    # trace_id/span_id: yours, or (with opentelemetry-api installed) the current span's
    observer.observe(text, sample={"input": question}, route="/answer", model="my-model")
    return text


with Client(os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")) as client:
    # Closing the observer (at shutdown) sends what is buffered, for at most 5 s.
    with client.observer(buffer_size=10_000) as observer:
        print(answer(observer, "capital of France"))
    stats = observer.stats()
    print(f"acknowledged: {stats.queued + stats.duplicate}, dropped: {sum(stats.dropped.values())}")
