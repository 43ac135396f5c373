"""The mail storm's messages: built one at a time as they are sent, and shared out among sessions."""
import json
import os
import time
from typing import Any, Iterator

FROM = "Benchbay mail storm <mailstorm@benchbay.invalid>"


def run_id(ctx: Any) -> str:
    try:
        with open(os.path.join(ctx.run_dir, "spec.json"), "rb") as handle:
            value = json.loads(handle.read().decode("utf-8")).get("run_id")
        if value not in (None, ""):
            return str(value)
    except (OSError, ValueError, AttributeError):
        pass
    return os.path.basename(str(ctx.run_dir).rstrip("/")) or "unknown"


def build_message(run: str, recipient: str, size: int, serial: int, pid: int = 0) -> bytes:
    """A message of `size` bytes (headers included), CRLF lines, nothing that needs dot-stuffing."""
    headers = [
        "From: " + FROM,
        "To: <{}>".format(recipient),
        "Subject: Benchbay mail storm {} #{}".format(run, serial),
        "Date: " + time.strftime("%a, %d %b %Y %H:%M:%S +0000", time.gmtime()),
        "Message-ID: <benchbay-{}-{}-{}@benchbay.invalid>".format(run, pid or os.getpid(), serial),
        "X-Benchbay-Run: {}".format(run),
        "MIME-Version: 1.0",
        "Content-Type: text/plain; charset=us-ascii",
        "",
    ]
    head = ("\r\n".join(headers) + "\r\n").encode("ascii")
    line = b"benchbay mail storm filler: this message goes to a sink and is discarded.......\r\n"
    left = max(size - len(head), 2)
    body = (line * (left // len(line) + 1))[:left - 2] + b"\r\n"
    return head + body



def messages(run: str, recipient: str, size: int, first: int, count: int) -> Iterator[bytes]:
    # built as they are sent: a few microseconds each, and a million messages never sit in memory at once
    pid = os.getpid()
    for serial in range(first, first + count):
        yield build_message(run, recipient, size, serial, pid)


def share(total: int, workers: int, index: int) -> int:
    """How many of `total` messages worker `index` of `workers` sends: the first ones take the remainder."""
    return total // workers + (1 if index < total % workers else 0)
