"""A TCP connection to a host's SSH port, bounded in time, and the one-line reasons an SSH handshake fails.

Both connecting (remote.connect) and scanning a host key (remote.hostkeys) start here.
"""
from __future__ import annotations

import socket
import threading
import time

import paramiko

from remote.errors import ConnectError, ConnectionRefused, ConnectTimeout, DnsError, RemoteError

_MIN_STEP = 0.5          # never give a step less than this, even when the budget is spent


class Deadline:
    """A time budget shared by the steps of one connection."""

    def __init__(self, timeout: float):
        self.timeout = timeout
        self.end = time.monotonic() + timeout

    def left(self) -> float:
        return max(self.end - time.monotonic(), _MIN_STEP)


def hostport(address: str, port: int) -> str:
    """address:port as messages show it, IPv6 addresses in brackets."""
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def resolve_address(name: str, port: int, timeout: float) -> list[tuple]:
    """getaddrinfo bounded by `timeout` (the system resolver has no timeout of its own)."""
    result: dict = {}

    def lookup() -> None:
        try:
            result["infos"] = socket.getaddrinfo(name, port, type=socket.SOCK_STREAM)
        except Exception as exc:  # gaierror, UnicodeError for odd names: all reported below
            result["error"] = exc

    worker = threading.Thread(target=lookup, name=f"dns-{name}", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise DnsError(f"cannot resolve {name}: no answer from the name server within {timeout:g} s")
    error = result.get("error")
    if error is not None or not result.get("infos"):
        reason = getattr(error, "strerror", None) or str(error or "no addresses")
        raise DnsError(f"cannot resolve {name}: {reason}")
    return result["infos"]


def open_tcp(address: str, port: int, timeout: float) -> socket.socket:
    """A connected TCP socket to address:port (DNS and connect both within `timeout`)."""
    deadline = Deadline(timeout)
    infos = resolve_address(address, port, timeout)
    where = hostport(address, port)
    error: ConnectError | None = None
    for family, kind, proto, _, sockaddr in infos:
        try:
            sock = socket.socket(family, kind, proto)
        except OSError as exc:  # e.g. no IPv6 in this kernel: try the next address, as ssh does
            error = ConnectError(f"cannot reach {where}: {exc.strerror or exc}")
            continue
        sock.settimeout(deadline.left())
        try:
            sock.connect(sockaddr)
            return sock
        except ConnectionRefusedError:
            error = ConnectionRefused(f"{where} refused the connection — is sshd running there?")
        except TimeoutError:
            error = ConnectTimeout(f"no answer from {where} within {timeout:g} s")
        except OSError as exc:
            error = ConnectError(f"cannot reach {where}: {exc.strerror or exc}")
        sock.close()
    raise error or ConnectError(f"cannot reach {where}")


def describe_handshake_error(
    exc: BaseException, transport: paramiko.Transport | None, address: str, port: int, timeout: float,
) -> RemoteError:
    """Turn a paramiko failure before authentication into a one-line user error."""
    if isinstance(exc, RemoteError):
        return exc
    where = hostport(address, port)
    detail = str(exc).strip() or type(exc).__name__
    no_banner = transport is None or not transport.remote_version
    if no_banner and isinstance(exc.__context__, (EOFError, ConnectionError)):
        return ConnectError(f"{where} closed the connection before the SSH banner — is it an SSH server?")
    # "No existing session": paramiko's own wait ended before the banner or key exchange did.
    if no_banner and ("banner" in detail or "No existing session" in detail or isinstance(exc, TimeoutError)):
        return ConnectTimeout(f"{where} accepted the connection but sent no SSH banner within {timeout:g} s")
    if "No existing session" in detail:
        return ConnectTimeout(f"{where}: SSH key exchange did not finish within {timeout:g} s")
    return ConnectError(f"{where}: SSH handshake failed: {detail}")
