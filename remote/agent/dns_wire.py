"""DNS messages on the wire (RFC 1035, EDNS0 RFC 6891): a query out, the header of an answer back.

Only what a stub needs to time a resolver: the query is built once per name (question bytes), and
each send only puts a fresh id in front. The answer is read as far as its id, flags, counts and the
question it echoes; names are decoded with compression pointers followed safely (a pointer must
point backwards, so a loop or a pointer past the end is an error, never a hang).
"""
import random
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple  # noqa: F401 - some only in type comments

QTYPES = {"A": 1, "NS": 2, "CNAME": 5, "SOA": 6, "PTR": 12, "HINFO": 13, "MX": 15, "TXT": 16, "AAAA": 28,
          "LOC": 29, "SRV": 33, "NAPTR": 35, "DS": 43, "SSHFP": 44, "RRSIG": 46, "NSEC": 47, "DNSKEY": 48,
          "TLSA": 52, "SVCB": 64, "HTTPS": 65, "SPF": 99, "ANY": 255, "CAA": 257}
QTYPE_NAMES = {v: k for k, v in QTYPES.items()}
RCODES = {0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED", 6: "YXDOMAIN",
          7: "YXRRSET", 8: "NXRRSET", 9: "NOTAUTH", 10: "NOTZONE", 16: "BADVERS"}
CLASS_IN = 1
TYPE_OPT = 41
FLAG_QR = 0x8000
FLAG_TC = 0x0200
FLAG_RD = 0x0100
HEADER = struct.Struct(">HHHHHH")
_U16 = struct.Struct(">H")
MAX_POINTERS = 64


class WireError(ValueError):
    """A name that cannot be encoded, or an answer that is not a well-formed DNS message."""


class Answer(NamedTuple):
    qid: int
    rcode: int          # with the EDNS0 extended bits when the answer has an OPT record
    tc: bool
    ancount: int
    qname: str          # the question it echoes ("" when it has none)
    qtype: int


def qtype_code(qtype: str) -> int:
    """ "AAAA" -> 28, "TYPE65" -> 65; WireError for a type this module does not know."""
    text = qtype.strip().upper()
    if text in QTYPES:
        return QTYPES[text]
    if text.startswith("TYPE") and text[4:].isdigit() and 0 < int(text[4:]) < 65536:
        return int(text[4:])
    raise WireError("unknown query type {!r}".format(qtype))


def qtype_name(code: int) -> str:
    return QTYPE_NAMES.get(code, "TYPE{}".format(code))


def rcode_name(code: int) -> str:
    return RCODES.get(code, "RCODE{}".format(code))


def encode_name(name: str) -> bytes:
    """ "www.example.com." -> b"\\x03www\\x07example\\x03com\\x00" (IDNA for names outside ASCII)."""
    text = name.strip()
    if text in ("", "."):
        return b"\x00"
    try:
        raw = text.encode("ascii")
    except UnicodeEncodeError:
        try:
            raw = text.encode("idna")
        except UnicodeError as exc:
            raise WireError("name {!r} cannot be encoded: {}".format(name, exc)) from None
    if raw.endswith(b"."):
        raw = raw[:-1]
    out = bytearray()
    for label in raw.split(b"."):
        if not label or len(label) > 63:
            raise WireError("name {!r} has an empty label or one longer than 63 bytes".format(name))
        out.append(len(label))
        out += label
    out.append(0)
    if len(out) > 255:
        raise WireError("name {!r} is longer than 255 bytes".format(name))
    return bytes(out)


def question(name: str, qtype: int, edns_size: Optional[int] = None, do_bit: bool = False) -> Tuple[bytes, int]:
    """The bytes after the header (question, and an OPT record with EDNS0) and the header's ARCOUNT."""
    body = encode_name(name) + struct.pack(">HH", qtype, CLASS_IN)
    if edns_size is None:
        return body, 0
    # root name, type OPT, class = UDP size, TTL = extended rcode/version/flags (DO bit), no options
    return body + struct.pack(">BHHIH", 0, TYPE_OPT, edns_size, 0x8000 if do_bit else 0, 0), 1


def header(qid: int, arcount: int, rd: bool = True) -> bytes:
    return HEADER.pack(qid, FLAG_RD if rd else 0, 1, 0, 0, arcount)


def build_query(name: str, qtype: str = "A", qid: Optional[int] = None, rd: bool = True,
                edns_size: Optional[int] = None) -> bytes:
    """A whole query message; a random id unless one is given."""
    body, arcount = question(name, qtype_code(qtype), edns_size)
    return header(random.getrandbits(16) if qid is None else qid, arcount, rd) + body


def read_name(data: bytes, offset: int) -> Tuple[str, int]:
    """The name at offset and the offset just after it in the message (after the first pointer, if any)."""
    labels = []  # type: List[str]
    end = -1
    jumps = 0
    size = len(data)
    total = 0
    while True:
        if offset >= size:
            raise WireError("name runs past the end of the message")
        length = data[offset]
        if length & 0xC0 == 0xC0:
            if offset + 1 >= size:
                raise WireError("compression pointer cut short")
            target = ((length & 0x3F) << 8) | data[offset + 1]
            if end < 0:
                end = offset + 2
            if target >= offset or jumps >= MAX_POINTERS:   # forward pointers could loop
                raise WireError("compression pointer does not point back")
            jumps += 1
            offset = target
            continue
        if length & 0xC0:
            raise WireError("unknown label type 0x{:02x}".format(length))
        offset += 1
        if length == 0:
            break
        if offset + length > size:
            raise WireError("label runs past the end of the message")
        total += length + 1
        if total > 255:
            raise WireError("name longer than 255 bytes")
        labels.append(data[offset:offset + length].decode("ascii", "replace"))
        offset += length
    return ".".join(labels) + ".", (end if end >= 0 else offset)


def _skip_record(data: bytes, offset: int) -> Tuple[int, int, int, int]:
    """(type, class, ttl, offset of the next record) of the record at offset."""
    _name, offset = read_name(data, offset)
    if offset + 10 > len(data):
        raise WireError("record cut short")
    rtype, rclass, ttl, rdlength = struct.unpack_from(">HHIH", data, offset)
    offset += 10 + rdlength
    if offset > len(data):
        raise WireError("record data runs past the end of the message")
    return rtype, rclass, ttl, offset


def parse_answer(data: bytes, full: bool = False) -> Answer:
    """Id, rcode, TC bit, answer count and the echoed question of an answer.

    full: also walk the records to the OPT record for the extended rcode (a truncated answer is not walked:
    its records may be cut)."""
    if len(data) < 12:
        raise WireError("message shorter than a DNS header")
    qid, flags, qdcount, ancount, nscount, arcount = HEADER.unpack_from(data, 0)
    if not flags & FLAG_QR:
        raise WireError("not an answer (QR bit clear)")
    rcode = flags & 0x000F
    tc = bool(flags & FLAG_TC)
    qname, qtype, offset = "", 0, 12
    if qdcount:
        qname, offset = read_name(data, offset)
        if offset + 4 > len(data):
            raise WireError("question cut short")
        qtype = _U16.unpack_from(data, offset)[0]
        offset += 4
        for _ in range(qdcount - 1):
            offset = read_name(data, offset)[1] + 4
    if full and not tc:
        for index in range(ancount + nscount + arcount):
            rtype, _rclass, ttl, offset = _skip_record(data, offset)
            if rtype == TYPE_OPT and index >= ancount + nscount:
                rcode |= ((ttl >> 24) & 0xFF) << 4
    return Answer(qid, rcode, tc, ancount, qname, qtype)


def frame(message: bytes) -> bytes:
    """TCP framing: the message behind its 2-byte length."""
    if len(message) > 65535:
        raise WireError("message longer than 65535 bytes")
    return _U16.pack(len(message)) + message


def unframe(buffer: bytes) -> Tuple[List[bytes], bytes]:
    """The whole messages at the front of a TCP stream buffer, and what is left of it."""
    out = []
    offset = 0
    while len(buffer) - offset >= 2:
        length = _U16.unpack_from(buffer, offset)[0]
        if len(buffer) - offset - 2 < length:
            break
        out.append(buffer[offset + 2:offset + 2 + length])
        offset += 2 + length
    return out, buffer[offset:]


# -- building answers: for a test responder and for checking this module against known bytes ------------------


def build_answer(query: bytes, rcode: int = 0, tc: bool = False, addresses: Tuple[str, ...] = ("192.0.2.1",),
                 ttl: int = 300) -> bytes:
    """An answer to `query`: its question echoed, A records pointing back at the question (compressed)."""
    qid, flags, _qd, _an, _ns, _ar = HEADER.unpack_from(query, 0)
    _name, end = read_name(query, 12)
    qtype = _U16.unpack_from(query, end)[0]
    quest = query[12:end + 4]
    records = b""
    if rcode == 0 and not tc and qtype == QTYPES["A"]:
        for address in addresses:
            records += struct.pack(">HHHIH", 0xC00C, QTYPES["A"], CLASS_IN, ttl, 4) + bytes(
                int(part) for part in address.split("."))
    count = len(addresses) if records else 0
    out_flags = FLAG_QR | (flags & FLAG_RD) | 0x0080 | (FLAG_TC if tc else 0) | (rcode & 0x0F)
    return HEADER.pack(qid, out_flags, 1, count, 0, 0) + quest + records
