"""`scorewire label` driven in a real terminal: tmux sends keystrokes and reads the screen."""

from __future__ import annotations

import asyncio
import json
import shlex
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorewire.cli.label import InputError, load_items
from scorewire.labels.label_model import output_hash
from scorewire.v1 import labels_pb2 as lpb
from scorewire.v1 import scoring_pb2 as spb

from tests.labels.conftest import LabelServer
from tests.support.components import require_binary
from tests.support.servers import free_port

REPO = Path(__file__).resolve().parents[2]
WAIT_S = 30.0  # how long a screen may take to show up on a loaded machine (not asserted)

DATASET = [
    {"id": "s1", "input": "2+2?", "output": "4", "scores": [{"name": "exact", "passed": True}]},
    {"id": "s2", "input": {"q": "capital of France?"}, "output": "Paris", "expected": "Paris"},
    {"id": "s3", "input": "greet", "output": "hi"},
    {"id": "s4", "input": "sum", "output": {"text": "ten", "value": 10}},
]


class Terminal:
    """A tmux session on a private server socket, running one command."""

    def __init__(self, cwd: Path) -> None:
        self.socket = f"scorewire-test-{uuid.uuid4().hex[:8]}"
        self.cwd = cwd

    def tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], check=True, capture_output=True, text=True
        )
        return out.stdout

    def start(self, *argv: str) -> None:
        env = f"PYTHONPATH={shlex.quote(f'{REPO}/service:{REPO}/clients/python/src')} TERM=xterm"
        cmd = " ".join(shlex.quote(a) for a in argv)
        script = f"cd {shlex.quote(str(self.cwd))} && env {env} {cmd}; echo EXITED:$?; sleep 600"
        self.tmux("new-session", "-d", "-s", "lab", "-x", "110", "-y", "60", script)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "lab")

    def send(self, *keys: str, literal: bool = True) -> None:
        for key in keys:
            self.tmux("send-keys", "-t", "lab", *(["-l"] if literal else []), key)

    async def wait_for(self, text: str) -> str:
        """The screen once it shows `text` and has stopped changing (fails with the screen
        after WAIT_S). The labeller draws a sample's header before its body, so a screen
        read as soon as the header shows can lack the body on a busy machine."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + WAIT_S
        last = None
        while True:
            screen = self.screen()
            if text in screen and screen == last:
                return screen
            if loop.time() > deadline:
                pytest.fail(f"the terminal never showed {text!r} settled; it shows:\n{screen}")
            last = screen if text in screen else None
            await asyncio.sleep(0.05)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


@pytest.fixture
def terminal(tmp_path) -> Iterator[Terminal]:
    require_binary("tmux", "tmux")
    term = Terminal(tmp_path)
    try:
        yield term
    finally:
        term.close()


@pytest.fixture
def dataset(tmp_path) -> Path:
    path = tmp_path / "data.jsonl"
    path.write_text("".join(json.dumps(d) + "\n" for d in DATASET), encoding="utf-8")
    return path


def labeller_cmd(source: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "scorewire.cli.label", str(source), "--labeller", "ana", *extra]


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def brief(labels: list[dict]) -> list[tuple]:
    return [(lb["sample_id"], lb["passed"], lb["note"]) for lb in labels]


async def test_labels_back_and_resume_in_a_real_terminal(terminal, dataset, tmp_path) -> None:
    # p, a note then f, s, back twice, relabel, quit; then a second session resumes.
    out = tmp_path / "labels.jsonl"
    terminal.start(*labeller_cmd(dataset))
    screen = await terminal.wait_for("[1/4] sample s1")
    assert "2+2?" in screen and "exact" in screen and "not labelled" in screen
    terminal.send("p")
    await terminal.wait_for("[2/4] sample s2")
    terminal.send("n")
    await terminal.wait_for("note:")
    terminal.send("too terse")
    terminal.send("Enter", literal=False)
    await terminal.wait_for("note for the next label: too terse")
    terminal.send("f")
    await terminal.wait_for("[3/4] sample s3")
    terminal.send("s")
    await terminal.wait_for("[4/4] sample s4")
    terminal.send("b")
    await terminal.wait_for("[3/4] sample s3")
    terminal.send("b")
    screen = await terminal.wait_for("[2/4] sample s2")
    assert "labelled FAIL (too terse)" in screen
    terminal.send("p")  # relabel s2: appended, the next unlabelled (s3) comes next
    await terminal.wait_for("[3/4] sample s3")
    terminal.send("q")
    screen = await terminal.wait_for("EXITED:0")
    assert "labelled 3 this session (2 pass, 1 fail); 2 of 4 samples unlabelled" in screen

    first = read_jsonl(out)
    assert brief(first) == [("s1", True, ""), ("s2", False, "too terse"), ("s2", True, "")]
    assert first[0]["output_hash"] == output_hash("4")
    assert {lb["labeller"] for lb in first} == {"ana"} and {lb["check"] for lb in first} == {
        "default"
    }
    assert all("T" in lb["time"] and lb["time"].endswith("+00:00") for lb in first)

    # Resume: s1 and s2 are labelled, so the session starts at s3.
    terminal.close()
    terminal.socket += "-2"
    terminal.start(*labeller_cmd(dataset))
    await terminal.wait_for("[3/4] sample s3")
    terminal.send("p")
    await terminal.wait_for("[4/4] sample s4")
    terminal.send("f")
    screen = await terminal.wait_for("EXITED:0")
    assert "0 of 4 samples unlabelled" in screen
    assert brief(read_jsonl(out))[3:] == [("s3", True, ""), ("s4", False, "")]
    assert read_jsonl(out)[4]["output_hash"] == output_hash("ten")

    # Everything labelled: nothing to do.
    terminal.close()
    terminal.socket += "-3"
    terminal.start(*labeller_cmd(dataset))
    await terminal.wait_for("nothing to label")
    await terminal.wait_for("EXITED:0")


async def test_resume_is_per_labeller_and_check(terminal, dataset, tmp_path) -> None:
    # Another check (or labeller) has not labelled anything yet: it starts at s1.
    out = tmp_path / "labels.jsonl"
    other = {"sample_id": "s1", "output_hash": output_hash("4"), "passed": True}
    out.write_text(json.dumps(other | {"labeller": "ana", "check": "default"}) + "\n")
    terminal.start(*labeller_cmd(dataset, "--check", "tone"))
    await terminal.wait_for("[1/4] sample s1")
    terminal.send("f")
    await terminal.wait_for("[2/4] sample s2")
    terminal.send("q")
    await terminal.wait_for("EXITED:0")
    assert read_jsonl(out)[1]["check"] == "tone"


async def test_labels_from_a_results_file_go_to_the_server(
    terminal, tmp_path, label_server: LabelServer
) -> None:
    # --server: every label is also stored in the service, where the human check reads it.
    results = tmp_path / "results.json"
    results.write_text(
        json.dumps(
            {
                "results": [
                    {
                        "sample_id": "r1",
                        "input": "q",
                        "output": "yes",
                        "scores": [{"name": "judge", "passed": False, "value": 0.25}],
                    },
                    {"sample_id": "r2", "input": "q", "output": "no", "scores": []},
                ]
            }
        )
    )
    terminal.start(*labeller_cmd(results, "--server", label_server.address))
    screen = await terminal.wait_for("[1/2] sample r1")
    assert "judge" in screen and "0.25" in screen
    terminal.send("p")
    await terminal.wait_for("[2/2] sample r2")
    terminal.send("f")
    await terminal.wait_for("EXITED:0")

    listed = await label_server.labels.ListLabels(lpb.ListLabelsRequest())
    assert [(lb.sample_id, lb.passed, lb.labeller) for lb in listed.labels] == [
        ("r1", True, "ana"),
        ("r2", False, "ana"),
    ]
    assert len(read_jsonl(tmp_path / "labels.jsonl")) == 2
    request = spb.ScoreRequest(
        sample=spb.Sample(id="r1"),
        output=spb.Output(text="yes"),
        checks=[spb.CheckSpec(type="human")],
    )
    assert (await label_server.scoring.Score(request)).scores[0].passed


async def test_unreachable_server_keeps_labels_in_the_file_and_exits_1(
    terminal, dataset, tmp_path
) -> None:
    terminal.start(*labeller_cmd(dataset, "--server", f"127.0.0.1:{free_port()}"))
    await terminal.wait_for("[1/4] sample s1")
    terminal.send("p")
    await terminal.wait_for("not yet on the server")
    terminal.send("q")
    screen = await terminal.wait_for("EXITED:1")
    assert "1 labels did not reach" in screen
    assert len(read_jsonl(tmp_path / "labels.jsonl")) == 1


# ---- the input formats ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "message"),
    [
        # a dataset line without an id cannot be labelled: labels key on it
        ('{"input": "x", "output": "y"}\n', "needs a sample id"),
        # without an output there is nothing to judge
        ('{"id": "a", "input": "x"}\n', "has no `output`"),
        # neither a results JSON nor JSONL
        ("not json at all\n", "line 1: not JSON"),
    ],
)
def test_bad_input_files_are_reported(tmp_path, content, message) -> None:
    path = tmp_path / "data.jsonl"
    path.write_text(content)
    with pytest.raises(InputError, match=message):
        load_items(str(path))


def test_integer_ids_and_structured_outputs_are_read(tmp_path) -> None:
    # Integer ids become their decimal text; a non-text output is its compact JSON.
    path = tmp_path / "data.jsonl"
    path.write_text('{"id": 7, "input": "x", "output": {"b": 1, "a": [1, 2]}}\n')
    (item,) = load_items(str(path))
    assert item.sample_id == "7" and item.output_text == '{"a":[1,2],"b":1}'
