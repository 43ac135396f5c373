"""SMTP replies that are not one complete line: multi-line replies (EHLO's), and what is not a reply.

The sender reads the usual one-line reply itself; what is left comes here. A multi-line reply is
handed on with its lines and codes as received (joining them is only worth it for a message, and with
a new session per message it cost more than the rest of the reply): joined() makes one line of it,
offers_pipelining() reads EHLO's keywords from it.
"""
import re
from typing import Optional, Tuple  # noqa: F401 - some only in type comments

from .mail_smtp import LINE_MAX

# continuation lines ("250-...") then the last line ("250 ..." or a bare "250")
_MULTILINE = re.compile(rb"(?:[0-9]{3}-[^\n]*\n)+([0-9]{3})(?:[ \r][^\n]*)?\n")
_PIPELINING = re.compile(r"^[0-9]{3}[ -]PIPELINING[ \t]*\r?$", re.M | re.I)


def multiline(buf: bytes) -> Tuple[Optional[Tuple[int, str]], bytes]:
    """(the first complete reply in buf, what follows it), or (None, buf) while it is incomplete.

    ValueError when buf does not hold an SMTP reply, or a line longer than LINE_MAX.
    """
    whole = _MULTILINE.match(buf)
    if whole is not None:   # a complete multi-line reply: one match, one decode
        return (int(whole.group(1)), buf[:whole.end()].decode("utf-8", "replace")), buf[whole.end():]
    lines, start = [], 0   # incomplete or malformed: line by line, to say which
    while True:
        end = buf.find(b"\n", start)
        if end < 0:
            if len(buf) - start > LINE_MAX:
                raise ValueError("reply line too long")
            return None, buf
        line = buf[start:end].rstrip(b"\r")
        start = end + 1
        if len(line) < 3 or not line[:3].isdigit():
            raise ValueError("not an SMTP reply: {!r}".format(line[:80]))
        lines.append(line[4:].decode("utf-8", "replace"))
        if len(line) == 3 or line[3:4] == b" ":
            return (int(line[:3]), " ".join(lines).strip()), buf[start:]


def joined(text: str) -> str:
    """A multi-line reply as one line of text, without its codes (for messages)."""
    if "\n" not in text:
        return text
    return " ".join(line.rstrip("\r")[4:] for line in text.split("\n")).strip()


def offers_pipelining(text: str) -> bool:
    """Whether an EHLO reply lists PIPELINING (RFC 2920)."""
    if "\n" in text:
        return _PIPELINING.search(text) is not None
    return "PIPELINING" in text.upper().split()
