"""The DNS wire format: queries byte for byte, answers read safely (compression, loops, truncation, TCP framing)."""
import struct

import pytest

from remote.agent import dns_wire

WWW = bytes.fromhex("03777777076578616d706c6503636f6d00")   # www.example.com.


def test_a_query_is_the_bytes_dig_sends():
    query = dns_wire.build_query("www.example.com", "A", qid=0x1234)
    assert query == bytes.fromhex("123401000001000000000000") + WWW + bytes.fromhex("00010001")


def test_edns0_adds_an_opt_record_with_the_udp_size_and_no_recursion_when_asked():
    query = dns_wire.build_query("www.example.com.", "AAAA", qid=1, rd=False, edns_size=1232)
    assert query == (bytes.fromhex("000100000001000000000001") + WWW + bytes.fromhex("001c0001")
                     + bytes.fromhex("00002904d0000000000000"))


def test_a_random_id_and_odd_types():
    ids = {struct.unpack(">H", dns_wire.build_query("a.example", "MX")[:2])[0] for _ in range(50)}
    assert len(ids) > 40
    assert dns_wire.qtype_code("type65") == 65 and dns_wire.qtype_code("https") == 65
    assert dns_wire.qtype_name(65) == "HTTPS" and dns_wire.qtype_name(999) == "TYPE999"
    with pytest.raises(dns_wire.WireError):
        dns_wire.qtype_code("BOGUS")


@pytest.mark.parametrize("name", ["a..b", "x" * 64 + ".com", ".".join(["abcdefghi"] * 26)])
def test_names_that_cannot_go_on_the_wire_are_refused(name):
    with pytest.raises(dns_wire.WireError):
        dns_wire.encode_name(name)


def test_a_name_outside_ascii_goes_as_idna():
    assert dns_wire.encode_name("bücher.de") == b"\x0dxn--bcher-kva\x02de\x00"


def test_an_answer_with_a_compressed_record_is_read():
    answer = (bytes.fromhex("123481800001000100000000") + WWW + bytes.fromhex("00010001")
              + bytes.fromhex("c00c000100010000012c00045db8d822"))
    read = dns_wire.parse_answer(answer, full=True)
    assert read == dns_wire.Answer(0x1234, 0, False, 1, "www.example.com.", 1)


def test_nxdomain_servfail_and_the_tc_bit():
    base = bytes.fromhex("0007") + b"%s" + bytes.fromhex("0001000000000000") + WWW + bytes.fromhex("00010001")
    assert dns_wire.parse_answer(base.replace(b"%s", b"\x81\x83")).rcode == 3
    assert dns_wire.rcode_name(dns_wire.parse_answer(base.replace(b"%s", b"\x81\x82")).rcode) == "SERVFAIL"
    assert dns_wire.parse_answer(base.replace(b"%s", b"\x83\x80")).tc is True


def test_the_extended_rcode_of_an_opt_record():
    answer = (bytes.fromhex("000981800001000000000001") + WWW + bytes.fromhex("00010001")
              + bytes.fromhex("00002904d0010000000000"))      # OPT, extended rcode 1 -> BADVERS (16)
    assert dns_wire.rcode_name(dns_wire.parse_answer(answer, full=True).rcode) == "BADVERS"


def test_a_name_in_the_middle_of_another_name_by_pointer():
    # question www.example.com, answer name "mail" + pointer to "example.com" at offset 16
    answer = (bytes.fromhex("000181800001000100000000") + WWW + bytes.fromhex("00010001")
              + b"\x04mail\xc0\x10" + bytes.fromhex("000100010000003c000401020304"))
    name, end = dns_wire.read_name(answer, 33)
    assert name == "mail.example.com." and end == 33 + 7
    assert dns_wire.parse_answer(answer, full=True).ancount == 1


@pytest.mark.parametrize("body", [
    b"\xc0\x0c",              # a pointer to itself
    b"\xc0\x20",              # a pointer forward, past the end
    b"\x03www\x07exam",        # a label cut short
    b"\x40abc",                # a label type that does not exist
])
def test_a_broken_answer_is_an_error_not_a_hang(body):
    with pytest.raises(dns_wire.WireError):
        dns_wire.parse_answer(bytes.fromhex("000181800001000000000000") + body + b"\x00\x01\x00\x01")


def test_a_query_is_not_an_answer_and_a_short_message_is_refused():
    with pytest.raises(dns_wire.WireError):
        dns_wire.parse_answer(dns_wire.build_query("a.example", qid=3))
    with pytest.raises(dns_wire.WireError):
        dns_wire.parse_answer(b"\x00\x01\x81")


def test_tcp_framing_round_trip_with_a_split_stream():
    one, two = dns_wire.build_query("a.example", qid=1), dns_wire.build_query("b.example", qid=2)
    stream = dns_wire.frame(one) + dns_wire.frame(two)
    messages, rest = dns_wire.unframe(stream[:-3])
    assert messages == [one] and rest == stream[len(one) + 2:-3]
    messages, rest = dns_wire.unframe(rest + stream[-3:])
    assert messages == [two] and rest == b""
    assert dns_wire.frame(one)[:2] == struct.pack(">H", len(one))


def test_an_answer_built_for_a_query_echoes_it():
    query = dns_wire.build_query("Mixed.Example", "A", qid=77)
    read = dns_wire.parse_answer(dns_wire.build_answer(query, addresses=("192.0.2.1", "192.0.2.2")), full=True)
    assert (read.qid, read.rcode, read.ancount, read.qname) == (77, 0, 2, "Mixed.Example.")
