"""Query lists from the files admins have: dnsperf files, plain names, BIND query logs, Squid access.log."""
# ruff: noqa: E501 - log lines as the servers write them
import pytest

from remote.agent import dns_queries

BIND_LOG = """\
26-Nov-2026 09:12:01.113 queries: info: client @0x7f3c2c0a1b60 10.0.0.17#53122 (www.debian.org): query: www.debian.org IN A +E(0)K (10.0.0.2)
26-Nov-2026 09:12:01.114 queries: info: client @0x7f3c2c0a1b60 10.0.0.17#41220 (www.debian.org): query: www.debian.org IN AAAA +E(0)K (10.0.0.2)
26-Nov-2026 09:12:01.402 client @0x7f3c2c0b9a10 10.0.0.23#60001 (_imaps._tcp.gmail.com): query: _imaps._tcp.gmail.com IN SRV +ED (10.0.0.2)
26-Nov-2026 09:12:02.001 general: info: zone example.org/IN: loaded serial 2026112601
26-Nov-2026 09:12:02.950 queries: info: client @0x7f3c2c0a1b60 10.0.0.17#53123 (17.0.0.10.in-addr.arpa): query: 17.0.0.10.in-addr.arpa IN PTR -E(0) (10.0.0.2)
"""

SQUID_LOG = """\
1764148321.123    152 192.168.1.20 TCP_MISS/200 5120 GET http://www.example.com/index.html - HIER_DIRECT/93.184.215.14 text/html
1764148321.300   4087 192.168.1.20 TCP_TUNNEL/200 6112 CONNECT www.google.com:443 - HIER_DIRECT/142.250.185.68 -
1764148322.010      0 192.168.1.21 TCP_DENIED/403 3900 CONNECT 10.1.2.3:8443 - HIER_NONE/- text/html
1764148322.500     21 192.168.1.21 TCP_MEM_HIT/200 912 GET http://user@Cdn.Example.NET:8080/a.js?x=1 - HIER_NONE/- application/javascript
1764148323.000     35 192.168.1.22 TCP_MISS/200 712 POST http://[2001:db8::1]/api - HIER_DIRECT/2001:db8::1 application/json
"""

SQUID_COMMON = """\
192.168.1.20 - - [26/Nov/2026:09:12:01 +0000] "GET http://deb.debian.org/debian/dists/bookworm/InRelease HTTP/1.1" 304 391 TCP_REFRESH_UNMODIFIED:HIER_DIRECT
192.168.1.20 - - [26/Nov/2026:09:12:02 +0000] "CONNECT api.github.com:443 HTTP/1.1" 200 6120 TCP_TUNNEL:HIER_DIRECT
"""


def _write(tmp_path, text, name="list.txt"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_a_dnsperf_file_keeps_types_and_skips_comments_and_garbage(tmp_path):
    path = _write(tmp_path, "; dnsperf input\nwww.example.com A\nexample.com MX\n\nexample.org aaaa\n"
                            "bad_type.example BOGUS\n# comment\n192.0.2.1 A\n")
    listed = dns_queries.load(path)
    assert listed.queries == [("www.example.com", "A"), ("example.com", "MX"), ("example.org", "AAAA")]
    assert listed.skipped == 2
    assert listed.source.startswith("dnsperf ") and "3 queries" in listed.source


def test_plain_names_are_asked_for_a(tmp_path):
    path = _write(tmp_path, "www.example.com\nmail.example.org.\nWWW.Example.NET\n")
    listed = dns_queries.load(path)
    assert listed.queries == [("www.example.com", "A"), ("mail.example.org", "A"), ("www.example.net", "A")]
    assert listed.source.startswith("names ")


def test_a_bind_query_log(tmp_path):
    listed = dns_queries.load(_write(tmp_path, BIND_LOG))
    assert listed.queries == [("www.debian.org", "A"), ("www.debian.org", "AAAA"), ("_imaps._tcp.gmail.com", "SRV"),
                              ("17.0.0.10.in-addr.arpa", "PTR")]
    assert listed.source.startswith("bindlog ") and listed.skipped == 1


def test_a_squid_access_log_gives_the_hosts_of_its_urls_and_connects(tmp_path):
    listed = dns_queries.load(_write(tmp_path, SQUID_LOG))
    assert listed.queries == [("www.example.com", "A"), ("www.google.com", "A"), ("cdn.example.net", "A")]
    assert listed.source.startswith("squid ") and listed.skipped == 2   # the address literals


def test_squid_in_common_log_format(tmp_path):
    listed = dns_queries.load(_write(tmp_path, SQUID_COMMON))
    assert listed.queries == [("deb.debian.org", "A"), ("api.github.com", "A")]


def test_the_format_can_be_named_and_limit_keeps_the_first(tmp_path):
    path = _write(tmp_path, "www.example.com A\nexample.com MX\nexample.org A\n")
    assert dns_queries.load(path, "names", limit=2).queries == [("www.example.com", "A"), ("example.com", "A")]
    with pytest.raises(ValueError, match="no query found"):
        dns_queries.load(path, "bindlog")
    with pytest.raises(ValueError, match="cannot read"):
        dns_queries.load(str(tmp_path / "missing.txt"))


def test_the_builtin_list_is_a_few_hundred_real_names_in_a_fixed_order():
    listed = dns_queries.load("builtin")
    assert 300 <= len(listed.queries) <= 1000
    assert listed.queries == dns_queries.builtin()
    types = {qtype for _name, qtype in listed.queries}
    assert {"A", "AAAA", "MX", "TXT", "SRV"} <= types
    assert all(dns_queries.clean_name(name) == name for name, _type in listed.queries)
    assert dns_queries.load("builtin", limit=25).queries == listed.queries[:25]
