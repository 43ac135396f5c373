"""Readiness of the mail storm's sockets: epoll, edge-triggered, where the host has it; selectors elsewhere.

With a new session per message every message costs a socket, and with level-triggered readiness each
socket also costs a change of interest from "writable" (connect) to "readable" (replies) and back
whenever a write is left half done: system calls that Postfix's smtp-source, written in C, pays for in
microseconds and a Python client pays for several times over. Edge-triggered epoll takes each socket
once, for both directions, and reports a direction only when it becomes ready (epoll(7)); the sender
therefore reads until a read comes back short and writes until the kernel takes no more, as it does.
"""
import select
import selectors
from typing import Any, Dict, List, Tuple  # noqa: F401 - some only in type comments

# (what the socket was registered with, readable or closed, writable or failed, known to have no error:
# then a finished connect needs no SO_ERROR query)
Event = Tuple[Any, bool, bool, bool]


class EpollPoller:
    """Each socket registered once for reading and writing; nothing to change until it is closed."""

    edge_triggered = True

    def __init__(self) -> None:
        self._epoll = select.epoll()
        self._owners = {}  # type: Dict[int, Any]
        self._mask = select.EPOLLIN | select.EPOLLOUT | select.EPOLLET
        self._read = select.EPOLLIN | select.EPOLLHUP | select.EPOLLERR
        self._write = select.EPOLLOUT | select.EPOLLHUP | select.EPOLLERR

    def add(self, fd: int, owner: Any) -> None:
        self._epoll.register(fd, self._mask)
        self._owners[fd] = owner

    def want_write(self, fd: int, owner: Any, wanted: bool) -> None:
        pass   # always watched, reported only when it becomes writable again

    def remove(self, fd: int) -> None:
        # explicit: a child forked meanwhile may hold the socket open after our close, and epoll would
        # go on reporting it under a number a new socket may have by then
        if self._owners.pop(fd, None) is not None:
            self._epoll.unregister(fd)

    def poll(self, timeout: float) -> List[Event]:
        owners, read, write, bad = self._owners, self._read, self._write, select.EPOLLERR | select.EPOLLHUP
        return [(owners[fd], bool(ev & read), bool(ev & write), not ev & bad)
                for fd, ev in self._epoll.poll(timeout) if fd in owners]

    def close(self) -> None:
        self._epoll.close()
        self._owners.clear()


class SelectorPoller:
    """Level-triggered, for a host without epoll: writability watched only while a write waits."""

    edge_triggered = False

    def __init__(self) -> None:
        self._selector = selectors.DefaultSelector()
        self._masks = {}  # type: Dict[int, int]

    def add(self, fd: int, owner: Any) -> None:
        self._selector.register(fd, selectors.EVENT_WRITE, owner)   # until connected
        self._masks[fd] = selectors.EVENT_WRITE

    def want_write(self, fd: int, owner: Any, wanted: bool) -> None:
        mask = selectors.EVENT_READ | (selectors.EVENT_WRITE if wanted else 0)
        if self._masks.get(fd, mask) != mask:
            self._selector.modify(fd, mask, owner)
            self._masks[fd] = mask

    def remove(self, fd: int) -> None:
        if self._masks.pop(fd, None) is not None:
            self._selector.unregister(fd)

    def poll(self, timeout: float) -> List[Event]:
        return [(key.data, bool(mask & selectors.EVENT_READ), bool(mask & selectors.EVENT_WRITE), False)
                for key, mask in self._selector.select(timeout)]

    def close(self) -> None:
        self._selector.close()
        self._masks.clear()


def make_poller() -> Any:
    return EpollPoller() if hasattr(select, "epoll") else SelectorPoller()
