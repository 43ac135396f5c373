"""The mail storm's event loop: all sessions driven by one thread with non-blocking sockets (mail_poll).

One event loop instead of a thread per session, as Postfix's smtp-source does it: twenty threads that
each wake for every reply spend their time handing the GIL to each other (tens of futex calls per
message), and on a busy host a preempted thread that holds the GIL stalls all the others. Here every
ready socket is served in one pass. What one session says and counts is mail_session's.
"""
import socket
import threading
import time
from typing import Iterator, List

from .mail_session import Session, StormShared
from .mail_smtp import SmtpFailure, Stats

TICK = 0.1          # how often the loop looks at the stop flag and the deadlines when nothing happens


def storm(host: str, port: int, helo: str, timeout: float, sender: str, recipient: str,
          batches: List[Iterator[bytes]], per_message: bool, stats: Stats, stop: threading.Event) -> None:
    """Sends every batch over its own session, all at once; returns when all are done or `stop` is set."""
    try:
        family, _, _, _, address = socket.getaddrinfo(host, port, 0, socket.SOCK_STREAM)[0]   # once per storm
    except OSError as exc:
        failure = SmtpFailure("connect", "error", "{}: {}".format(host, exc.strerror or exc), True)
        for batch in batches:
            for _ in batch:
                stats.attempt()
                stats.fail(failure)
        return
    shared = StormShared(address, family, helo, timeout, sender, recipient, per_message, stats)
    sessions = [Session(shared, iter(batch)) for batch in batches]
    shared.runnable.extend(sessions)
    shared.unfinished = len(sessions)
    try:
        _loop(shared, sessions, stop)
    finally:
        for session in sessions:
            session.close()
        shared.poller.close()


def _loop(shared: StormShared, sessions: List[Session], stop: threading.Event) -> None:
    poll = shared.poller.poll
    next_deadline_check = time.monotonic() + TICK
    while not stop.is_set():
        # the runnable queue instead of direct calls: a server refusing every connection must not recurse
        while shared.runnable and not stop.is_set():
            session = shared.runnable.popleft()
            try:
                session.next_message()
            except SmtpFailure as failure:
                session.failed(failure)
        if not shared.unfinished:
            return
        if shared.runnable:
            continue
        for session, readable, writable, clean in poll(TICK):
            try:
                if session.sock is None:
                    continue
                if writable:
                    if session.connecting:
                        session.connected(clean)
                    elif session.outbuf:
                        session.flush()
                if readable and session.sock is not None:
                    session.readable()
            except SmtpFailure as failure:
                session.failed(failure)
        now = time.monotonic()
        if now >= next_deadline_check:
            next_deadline_check = now + TICK
            for session in sessions:
                if session.sock is not None and now > session.deadline:
                    try:
                        session.timed_out()
                    except SmtpFailure as failure:
                        session.failed(failure)
