"""What a replay sends and where: the query list encoded once, and the resolvers' addresses."""
import socket
from typing import List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from . import dns_wire


class Prepared:
    """A query list ready to send: each (name, type) encoded once."""

    def __init__(self, queries: Sequence[Tuple[str, str]], edns_size: Optional[int] = None, rd: bool = True) -> None:
        self.names = []  # type: List[str]
        self.types = []  # type: List[str]
        self.bodies = []  # type: List[bytes]    # question (and OPT) bytes
        self.quest = []  # type: List[bytes]     # the question as an answer echoes it
        self.flags = dns_wire.FLAG_RD if rd else 0
        skipped = []  # type: List[str]
        for name, qtype in queries:
            try:
                code = dns_wire.qtype_code(qtype)
                body, arcount = dns_wire.question(name.lower(), code, edns_size)
            except dns_wire.WireError as exc:
                skipped.append(str(exc))
                continue
            self.names.append(name)
            self.types.append(dns_wire.qtype_name(code))
            self.bodies.append(body)
            self.quest.append(body[:len(body) - 11] if arcount else body)
        self.arcount = 1 if edns_size is not None else 0
        self.skipped = skipped

    def __len__(self) -> int:
        return len(self.names)


def parse_resolver(text: str) -> Tuple[str, int]:
    """ "10.0.0.2" -> ("10.0.0.2", 53), "[::1]:5353" / "127.0.0.1:5353" -> with the port; ValueError if wrong."""
    text = text.strip()
    host, port = text, 53
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":") or not rest[1:].isdigit():
                raise ValueError("resolver {!r}: give [ADDRESS]:PORT".format(text))
            port = int(rest[1:])
    elif text.count(":") == 1:
        host, _, number = text.partition(":")
        if not number.isdigit():
            raise ValueError("resolver {!r}: the port must be a number".format(text))
        port = int(number)
    if not host or not 0 < port < 65536:
        raise ValueError("resolver {!r}: give ADDRESS or ADDRESS:PORT".format(text))
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return host, port
        except (OSError, ValueError):
            continue
    raise ValueError("resolver {!r}: give an IP address (a name would need a resolver itself)".format(text))


def resolver_text(host: str, port: int) -> str:
    return "[{}]:{}".format(host, port) if ":" in host else "{}:{}".format(host, port)
