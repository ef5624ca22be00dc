"""`scorewire label`: judge outputs by hand, one keystroke per sample, into a JSONL file.

It reads either a results file of `scorewire run --output` or a dataset:

- results JSON: `{"results": [{"sample_id", "input", "output", "expected"?,
  "scores": [{"name", "passed", "value", "reason", "error"?}]}]}`;
- dataset JSONL: one object per line with `id` (or `sample_id`), `input`, `output`,
  and optionally `expected` and `scores`.

`output` is the output text, or an object `{"text", "value"}`, or any other JSON value
(a structured output); labels are bound to `scorewire.labels.labelled_text` of it, the
same text the `human` check hashes. Integer ids are read as their decimal text.

Keys: p pass, f fail, s skip, n note (added to the next pass/fail), b back, q quit.
Every label is appended to the output file (flushed and fsynced) the moment it is made;
starting again skips samples that this labeller already labelled for this check, so a
session resumes where it stopped (skipped samples come back). Going back and labelling
again appends a newer label: the file keeps the history, the latest label counts.
With `--server`, each label is also sent to the service's LabelService; labels the
server did not take are retried with the next one, and reported at the end (exit 1).
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import sys
import termios
import tty
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from scorewire.labels.jsonl import LabelFileError, label_line, read_labels
from scorewire.labels.label_model import DEFAULT_CHECK, Label, labelled_text, output_hash, utc_now

_KEYS_HELP = "[p] pass  [f] fail  [s] skip  [n] note  [b] back  [q] quit"
_MAX_INPUT_CHARS = 4000


class InputError(Exception):
    """The results or dataset file cannot be used."""


@dataclass(slots=True)
class Item:
    """One sample and output to label."""

    sample_id: str
    input: Any
    output_text: str
    expected: Any = None
    scores: list[dict[str, Any]] = field(default_factory=list)
    output_hash: str = ""

    def __post_init__(self) -> None:
        self.output_hash = output_hash(self.output_text)


# ---- reading the input -------------------------------------------------------------------


def _output_text(raw: Any) -> str:
    if isinstance(raw, str):
        return raw
    if isinstance(raw, dict) and isinstance(raw.get("text"), str):
        return labelled_text(raw["text"], raw.get("value"))
    return labelled_text("", raw)


def _item(entry: Any, where: str) -> Item:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: expected a JSON object")
    raw_sample = entry.get("sample")
    sample: dict[str, Any] = raw_sample if isinstance(raw_sample, dict) else {}
    sample_id = entry.get("sample_id", entry.get("id", sample.get("id")))
    if isinstance(sample_id, int) and not isinstance(sample_id, bool):
        sample_id = str(sample_id)
    if not isinstance(sample_id, str) or not sample_id:
        raise InputError(f"{where}: needs a sample id (`sample_id` or `id`); labels key on it")
    if "output" not in entry:
        raise InputError(f"{where}: has no `output` to label")
    scores = entry.get("scores") or []
    return Item(
        sample_id=sample_id,
        input=entry.get("input", sample.get("input")),
        output_text=_output_text(entry["output"]),
        expected=entry.get("expected", sample.get("expected")),
        scores=[s for s in scores if isinstance(s, dict)] if isinstance(scores, list) else [],
    )


def load_items(path: str) -> list[Item]:
    """The samples of a results JSON or a dataset JSONL, in file order."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as err:
        raise InputError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8") from None
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if isinstance(doc, dict) and isinstance(doc.get("results"), list):
        return [_item(e, f"{path} results[{i}]") for i, e in enumerate(doc["results"])]
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except ValueError as err:
            raise InputError(
                f"{path} line {number}: not JSON ({err}); expected a results JSON with "
                '{"results": [...]} or a dataset JSONL'
            ) from None
        items.append(_item(entry, f"{path} line {number}"))
    return items


# ---- keys --------------------------------------------------------------------------------


class Keys:
    """Single keystrokes from the terminal (cbreak mode), or characters from a pipe."""

    def __init__(self, stream: Any = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        self._fd = self._stream.fileno() if self._stream.isatty() else None
        self._saved: list[Any] | None = None

    def __enter__(self) -> Keys:
        if self._fd is not None:
            self._saved = termios.tcgetattr(self._fd)
            tty.setcbreak(self._fd)
        return self

    def __exit__(self, *exc: object) -> None:
        self._restore()

    def _restore(self) -> None:
        if self._fd is not None and self._saved is not None:
            termios.tcsetattr(self._fd, termios.TCSADRAIN, self._saved)

    def key(self) -> str:
        """The next key, lower-cased; "" at end of input."""
        if self._fd is not None:
            data = os.read(self._fd, 1)
            return data.decode("latin-1").lower()
        return str(self._stream.read(1)).lower()

    def line(self, console: Console, prompt: str) -> str:
        """A line typed in the terminal's normal mode (echo and editing on)."""
        self._restore()
        try:
            if self._fd is not None:
                return console.input(prompt)
            console.print(prompt, end="")
            return str(self._stream.readline()).rstrip("\n")
        finally:
            if self._fd is not None:
                tty.setcbreak(self._fd)


# ---- sending to the server ---------------------------------------------------------------


class Pusher:
    """Sends labels to a LabelService; keeps those not taken and retries them.

    Each label is sent in its own PutLabels with a request id chosen when it was made,
    so a retry after an answer that never came (or an unknown outcome) stores it once.
    """

    def __init__(self, address: str, timeout_s: float = 10.0) -> None:
        import grpc
        from scorewire.v1 import labels_pb2_grpc

        self._channel = grpc.insecure_channel(address)
        self._stub = labels_pb2_grpc.LabelServiceStub(self._channel)
        self._timeout_s = timeout_s
        self.pending: list[tuple[str, Label]] = []
        """(request id, label) of every label not yet acknowledged, oldest first."""
        self.last_error = ""

    def push(self, label: Label | None = None) -> bool:
        """Send `label` and anything pending; False (and kept) when the server fails."""
        import uuid

        import grpc
        from scorewire.server.labels_service import label_to_pb
        from scorewire.v1 import labels_pb2

        if label is not None:
            self.pending.append((str(uuid.uuid4()), label))
        while self.pending:
            request_id, first = self.pending[0]
            request = labels_pb2.PutLabelsRequest(
                labels=[label_to_pb(first)], request_id=request_id
            )
            try:
                self._stub.PutLabels(request, timeout=self._timeout_s)
            except grpc.RpcError as err:
                self.last_error = f"{err.code().name}: {err.details()}"
                return False
            self.pending.pop(0)
        self.last_error = ""
        return True

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()


# ---- the session -------------------------------------------------------------------------


def _json_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, indent=2)
    if len(text) > _MAX_INPUT_CHARS:
        return text[:_MAX_INPUT_CHARS] + f"\n… ({len(text) - _MAX_INPUT_CHARS} more characters)"
    return text


def _scores_table(scores: list[dict[str, Any]]) -> Table:
    table = Table(title="automatic scores", title_justify="left", expand=True)
    for column in ("check", "result", "value", "reason"):
        table.add_column(column, overflow="fold")
    for s in scores:
        err = s.get("error")
        if err:
            result = Text("ERROR", style="bold yellow")
            code = err.get("code", "") if isinstance(err, dict) else str(err)
            reason = f"{code}: {s.get('reason', '')}"
        elif s.get("passed"):
            result, reason = Text("pass", style="green"), str(s.get("reason", ""))
        else:
            result, reason = Text("fail", style="red"), str(s.get("reason", ""))
        value = s.get("value")
        shown = f"{value:.3g}" if isinstance(value, int | float) else ""
        table.add_row(Text(str(s.get("name", s.get("type", "")))), result, shown, Text(reason))
    return table


class Session:
    """One labelling session over a list of items, writing to one JSONL file."""

    def __init__(
        self,
        items: list[Item],
        out_path: str,
        labeller: str,
        check: str,
        console: Console,
        pusher: Pusher | None = None,
    ) -> None:
        self.items = items
        self.out_path = out_path
        self.labeller = labeller
        self.check = check
        self.console = console
        self.pusher = pusher
        self.mine: dict[tuple[str, str], Label] = {}
        self.made: list[Label] = []
        self.note = ""
        self.status = ""
        for lb in read_labels(out_path) if os.path.exists(out_path) else []:
            if lb.labeller == labeller and lb.check == check:
                seen = self.mine.get((lb.sample_id, lb.output_hash))
                if seen is None or lb.created_at >= seen.created_at:
                    self.mine[(lb.sample_id, lb.output_hash)] = lb

    def labelled(self, item: Item) -> Label | None:
        """This labeller's latest label of the item for this check, if any."""
        return self.mine.get((item.sample_id, item.output_hash))

    def next_unlabelled(self, after: int) -> int | None:
        """The first item after index `after` without a label, or None."""
        for i in range(after + 1, len(self.items)):
            if self.labelled(self.items[i]) is None:
                return i
        return None

    def record(self, item: Item, passed: bool, out: Any) -> None:
        """Append a label to the file (durably), remember it, and send it if asked."""
        label = Label(
            sample_id=item.sample_id,
            output_hash=item.output_hash,
            passed=passed,
            labeller=self.labeller,
            created_at=utc_now(),
            check=self.check,
            note=self.note,
        )
        out.write(label_line(label))
        out.flush()
        os.fsync(out.fileno())
        self.mine[(item.sample_id, item.output_hash)] = label
        self.made.append(label)
        self.note = ""
        self.status = f"{item.sample_id}: labelled {'pass' if passed else 'fail'}"
        if self.pusher is not None and not self.pusher.push(label):
            self.status += (
                f" (not yet on the server: {self.pusher.last_error}; "
                f"{len(self.pusher.pending)} waiting)"
            )

    def render(self, index: int) -> None:
        """Show one item: header, input, output, expected, scores, keys."""
        item = self.items[index]
        label = self.labelled(item)
        if label is None:
            state = Text("not labelled", style="dim")
        else:
            state = Text(
                f"labelled {'PASS' if label.passed else 'FAIL'}"
                + (f" ({label.note})" if label.note else ""),
                style="green" if label.passed else "red",
            )
        head = Text.assemble(
            (f"[{index + 1}/{len(self.items)}] ", "bold"),
            ("sample ", ""),
            (item.sample_id, "bold cyan"),
            "  ",
            state,
            f"   labeller {self.labeller} · check {self.check}",
        )
        parts: list[Any] = [
            head,
            Panel(Text(_json_text(item.input)), title="input", title_align="left"),
            Panel(Text(item.output_text), title="output", title_align="left", border_style="cyan"),
        ]
        if item.expected is not None:
            parts.append(
                Panel(Text(_json_text(item.expected)), title="expected", title_align="left")
            )
        if item.scores:
            parts.append(_scores_table(item.scores))
        if self.note:
            parts.append(Text(f"note for the next label: {self.note}", style="italic"))
        if self.status:
            parts.append(Text(self.status, style="dim"))
        parts.append(Text(_KEYS_HELP, style="bold"))
        self.console.clear()
        self.console.print(Group(*parts))

    def run(self, keys: Keys, out: Any) -> None:
        """The key loop: until every sample is labelled or skipped past, or `q`."""
        index = self.next_unlabelled(-1)
        while index is not None:
            self.render(index)
            try:
                key = keys.key()
            except KeyboardInterrupt:
                return
            if key in ("", "q", "\x03", "\x04"):
                return
            item = self.items[index]
            if key in ("p", "f"):
                self.record(item, key == "p", out)
                index = self.next_unlabelled(index)
            elif key == "s":
                self.status, self.note = f"{item.sample_id}: skipped", ""
                index = self.next_unlabelled(index)
            elif key == "b":
                if index == 0:
                    self.status = "this is the first sample"
                else:
                    index, self.note, self.status = index - 1, "", ""
            elif key == "n":
                try:
                    self.note = keys.line(self.console, "note: ").strip()
                except (EOFError, KeyboardInterrupt):
                    return
                self.status = "note kept for the next pass/fail" if self.note else ""
            elif key.strip():
                self.status = f"unknown key {key!r}"

    def summary(self) -> str:
        """What the session did, for the last line on screen."""
        passed = sum(1 for lb in self.made if lb.passed)
        left = sum(1 for it in self.items if self.labelled(it) is None)
        return (
            f"labelled {len(self.made)} this session ({passed} pass, "
            f"{len(self.made) - passed} fail); {left} of {len(self.items)} samples "
            f"unlabelled; labels in {self.out_path}"
        )


# ---- the command ---------------------------------------------------------------------------


def _default_labeller() -> str:
    with contextlib.suppress(Exception):
        return getpass.getuser()
    return "anonymous"


@contextlib.contextmanager
def _appending(path: str) -> Iterator[Any]:
    with open(path, "a", encoding="utf-8") as f:
        yield f


def run_label(args: argparse.Namespace, *, console: Console | None = None) -> int:
    """Run `scorewire label`; 0 when done or quit, 1 when labels did not reach --server."""
    console = console or Console(highlight=False)
    labeller = (args.labeller or _default_labeller()).strip()
    if not labeller:
        console.print("--labeller must not be empty")
        return 2
    try:
        items = load_items(args.source)
        pusher = Pusher(args.server) if args.server else None
        session = Session(items, args.out, labeller, args.check, console, pusher)
    except (InputError, LabelFileError) as err:
        console.print(Text(f"scorewire label: {err}", style="red"))
        return 2
    if session.next_unlabelled(-1) is None:
        console.print(f"nothing to label: {session.summary()}")
        return 0
    with Keys() as keys, _appending(args.out) as out:
        session.run(keys, out)
    console.clear()
    console.print(session.summary())
    if pusher is not None:
        pusher.push()
        pusher.close()
        if pusher.pending:
            console.print(
                Text(
                    f"{len(pusher.pending)} labels did not reach {args.server} "
                    f"({pusher.last_error}); they are in {args.out}",
                    style="red",
                )
            )
            return 1
    return 0


def add_label_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the `label` subcommand to the `scorewire` parser's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "label",
        help="label outputs by hand in the terminal",
        description="Show each sample's input, output and automatic scores, and take a "
        "verdict by single keystrokes: p pass, f fail, s skip, n note, b back, q quit. "
        "Labels are appended to a JSONL file; a new session resumes where the last stopped.",
    )
    parser.add_argument(
        "source",
        metavar="RESULTS_OR_DATASET",
        help="a results JSON of `scorewire run --output`, or a dataset JSONL (id, input, output)",
    )
    parser.add_argument(
        "--out", default="labels.jsonl", help="labels file to append to (default labels.jsonl)"
    )
    parser.add_argument("--labeller", help="who is labelling (default: the OS user name)")
    parser.add_argument(
        "--check",
        default=DEFAULT_CHECK,
        help="the label check these verdicts are for, as a human check's `check:` "
        f"(default {DEFAULT_CHECK})",
    )
    parser.add_argument(
        "--server", metavar="HOST:PORT", help="also store every label in this scorewire server"
    )
    parser.set_defaults(func=run_label)
    return parser


def main(argv: list[str] | None = None) -> int:
    """`python -m scorewire.cli.label ...`: the same command without the rest of the CLI."""
    parser = argparse.ArgumentParser(prog="scorewire")
    add_label_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["label", *(sys.argv[1:] if argv is None else argv)])
    return run_label(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
