"""The viewer answers in threads of its own: a page that takes long (a slow store) does
not hold up the gRPC server beside it in the same process."""

from __future__ import annotations

import asyncio
import threading
import urllib.request

from scorewire.v1 import scoring_pb2 as pb
from scorewire.viewer import RunInfo, RunNotFound
from scorewire.viewer.serving import ViewerServer

from tests.server.conftest import start_server


class HeldSource:
    """A source whose runs list waits until released, like a store under load."""

    def __init__(self) -> None:
        self.entered = threading.Event()
        self.release = threading.Event()

    def list_runs(self) -> list[RunInfo]:
        self.entered.set()
        assert self.release.wait(60), "never released"
        return []

    def get_run(self, run_id: str) -> object:
        raise RunNotFound(run_id)

    results = compare = get_run


async def test_a_slow_viewer_page_does_not_hold_up_scoring() -> None:
    server = await start_server()
    source = HeldSource()
    viewer = ViewerServer(lambda _who: source)
    port = viewer.serve("127.0.0.1", 0)
    try:
        page = asyncio.create_task(
            asyncio.to_thread(urllib.request.urlopen, f"http://127.0.0.1:{port}/", timeout=60)
        )
        assert await asyncio.to_thread(source.entered.wait, 30)
        # the page is still being made; a Score call on the same process is answered
        request = pb.ScoreRequest(output=pb.Output(text="Paris"))
        request.compact.append("contains:Paris")
        response = await server.stub.Score(request, timeout=30)
        assert response.scores[0].passed and not page.done()
        source.release.set()
        assert (await page).status == 200
    finally:
        source.release.set()
        viewer.close()
        await server.channel.close()
        await server.running.stop(0)
