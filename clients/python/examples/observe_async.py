"""Hand each answer to scorewire from an asyncio service; observe() never waits or raises."""

import asyncio
import os

from scorewire.client import AsyncClient, AsyncObserver


async def answer(observer: AsyncObserver, question: str) -> str:
    """A request handler: answer, then observe (a plain call: it returns at once)."""
    text = "Paris is the capital of France."  # your model's output
    observer.observe(text, sample={"input": question}, route="/answer", model="my-model")
    return text


async def main() -> None:
    async with AsyncClient(os.environ.get("SCOREWIRE_ADDRESS", "127.0.0.1:50051")) as client:
        # A task on this loop sends; closing the observer (at shutdown) sends what is
        # buffered, for at most 5 s.
        async with client.observer(buffer_size=10_000) as observer:
            print(await answer(observer, "capital of France"))
        stats = observer.stats()
        dropped = sum(stats.dropped.values())
        print(f"acknowledged: {stats.queued + stats.duplicate}, dropped: {dropped}")


asyncio.run(main())
