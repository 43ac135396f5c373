"""The synthetic queue storm, for hosts where no MTA listens: per message what an MTA queue does.

create (O_CREAT|O_EXCL), write, fsync, close, rename into a second directory, unlink: the disk work of
queueing and delivering one message, without the network and without an MTA. Labelled synthetic.
"""
import os
import threading
import time
from typing import Dict, List  # noqa: F401 - some only in type comments


class SyntheticStats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.accepted = 0
        self.accept_times = []  # type: List[float]
        self.latency = {"create": [], "fsync": [], "total": []}  # type: Dict[str, List[float]]


def worker(directory: str, index: int, count: int, message: bytes, stats: SyntheticStats,
           stop: threading.Event) -> None:
    incoming = os.path.join(directory, "incoming")
    active = os.path.join(directory, "active")
    for n in range(count):
        if stop.is_set():
            return
        name = "{}-{}".format(index, n)
        src, dst = os.path.join(incoming, name), os.path.join(active, name)
        t0 = time.monotonic()
        fd = os.open(src, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        t1 = time.monotonic()
        try:
            view = memoryview(message)
            while view:
                view = view[os.write(fd, view):]
            t2 = time.monotonic()
            os.fsync(fd)
            t3 = time.monotonic()
        finally:
            os.close(fd)
        os.rename(src, dst)
        os.unlink(dst)
        done = time.monotonic()
        with stats.lock:
            stats.accepted += 1
            stats.accept_times.append(done)
            stats.latency["create"].append(t1 - t0)
            stats.latency["fsync"].append(t3 - t2)
            stats.latency["total"].append(done - t0)


def prepare(directory: str) -> None:
    os.makedirs(os.path.join(directory, "incoming"))
    os.makedirs(os.path.join(directory, "active"))
