"""Query lists: read from the files admins have, or the built-in list.

Formats (query_format, or "auto" to tell from the first lines):
  dnsperf   "www.example.com A" per line (dnsperf's and resperf's input; ";" or "#" comments)
  names     one name per line, type A
  bindlog   BIND's query log: "... query: www.example.com IN AAAA +E(0)K (10.0.0.1)"
  squid     Squid's access.log (native or common format): the host of each URL, CONNECT host:443 too
Every occurrence is kept, in the order of the file (a name asked again is a cache hit, as it was for the
resolver that logged it); limit keeps the first N. Names that are IP addresses are no DNS query: skipped.
"""
import re
import socket
from typing import List, NamedTuple, Optional, Tuple  # noqa: F401 - some only in type comments

from . import dns_wire

FORMATS = ("auto", "dnsperf", "names", "bindlog", "squid")
DETECT_LINES = 50
MAX_FILE_BYTES = 256 << 20

_BIND = re.compile(r"query: (\S+) IN (\S+)")
_SQUID_NATIVE = re.compile(r"^\d+(?:\.\d+)?\s+-?\d+\s+\S+\s+[A-Z_]+/\d{3}\s+\S+\s+([A-Z]+)\s+(\S+)")
_SQUID_COMMON = re.compile(r'"([A-Z]+) (\S+)(?: HTTP/[\d.]+)?"')
_LABEL = re.compile(r"^[A-Za-z0-9_*](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


class QueryList(NamedTuple):
    queries: List[Tuple[str, str]]   # (name, type)
    source: str                      # what the list is, for the record: "builtin (300 queries)"
    skipped: int                     # lines that held no query


def _is_address(host: str) -> bool:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            socket.inet_pton(family, host)
            return True
        except (OSError, ValueError):
            continue
    return False


def clean_name(text: str) -> Optional[str]:
    """A host name as a query name, or None when it is no name (an address, an empty or odd word)."""
    name = text.strip().strip(".").lower()
    if not name or _is_address(name) or len(name) > 253:
        return None
    labels = name.split(".")
    if not all(_LABEL.match(label) for label in labels):
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError:
            return None
        if not all(_LABEL.match(label) for label in name.split(".")):
            return None
    return name


def _known_type(word: str) -> bool:
    try:
        dns_wire.qtype_code(word)
        return True
    except dns_wire.WireError:
        return False


def _comment(line: str) -> bool:
    return not line or line[0] in "#;"


def parse_dnsperf(line: str) -> Optional[Tuple[str, str]]:
    words = line.split()
    if not words or _comment(words[0]):
        return None
    qtype = words[1].upper() if len(words) > 1 else "A"
    name = clean_name(words[0])
    return (name, qtype) if name and _known_type(qtype) else None


def parse_name(line: str) -> Optional[Tuple[str, str]]:
    words = line.split()
    if not words or _comment(words[0]):
        return None
    name = clean_name(words[0])
    return (name, "A") if name else None


def parse_bindlog(line: str) -> Optional[Tuple[str, str]]:
    found = _BIND.search(line)
    if not found:
        return None
    name = clean_name(found.group(1))
    qtype = found.group(2).upper()
    return (name, qtype) if name and _known_type(qtype) else None


def url_host(method: str, url: str) -> Optional[str]:
    """The host a proxy looked up for this request: the URL's, or CONNECT's host:port."""
    if method == "CONNECT" or "://" not in url:
        host = url
    else:
        host = url.split("://", 1)[1].split("/", 1)[0].split("?", 1)[0]
        host = host.rpartition("@")[2]
    if host.startswith("["):
        return None   # an IPv6 literal
    host = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    return clean_name(host)


def parse_squid(line: str) -> Optional[Tuple[str, str]]:
    found = _SQUID_NATIVE.match(line) or _SQUID_COMMON.search(line)
    if not found:
        return None
    name = url_host(found.group(1), found.group(2))
    return (name, "A") if name else None


PARSERS = {"dnsperf": parse_dnsperf, "names": parse_name, "bindlog": parse_bindlog, "squid": parse_squid}


def detect(lines: List[str]) -> str:
    """The format of a file from its first non-empty lines."""
    sample = [line for line in lines if line.strip() and not _comment(line.strip())][:DETECT_LINES]
    if not sample:
        return "names"
    for fmt in ("bindlog", "squid"):
        if sum(1 for line in sample if PARSERS[fmt](line)) * 2 >= len(sample):
            return fmt
    two = [line.split() for line in sample if len(line.split()) == 2]
    if two and sum(1 for words in two if _known_type(words[1])) * 2 >= len(sample):
        return "dnsperf"
    return "names"


def read_file(path: str, fmt: str = "auto", limit: Optional[int] = None, label: str = "") -> QueryList:
    """The queries of a file; ValueError (one line, what to do) when it holds none or cannot be read."""
    if fmt not in FORMATS:
        raise ValueError("query_format must be one of {}, not {!r}".format(", ".join(FORMATS), fmt))
    try:
        with open(path, "rb") as handle:
            raw = handle.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise ValueError("dns: cannot read the query list {} on the host: {} (a file on the workbench is uploaded "
                         "when its path exists there)".format(path, exc.strerror or exc)) from None
    if len(raw) > MAX_FILE_BYTES:
        raise ValueError("dns: the query list {} is larger than {} MB: give fewer lines".format(
            path, MAX_FILE_BYTES >> 20))
    lines = raw.decode("utf-8", "replace").splitlines()
    chosen = detect(lines) if fmt == "auto" else fmt
    parse = PARSERS[chosen]
    queries = []  # type: List[Tuple[str, str]]
    skipped = 0
    for line in lines:
        if limit is not None and len(queries) >= limit:
            break
        if not line.strip() or _comment(line.strip()):
            continue
        query = parse(line)
        if query is None:
            skipped += 1
        else:
            queries.append(query)
    if not queries:
        raise ValueError("dns: no query found in {} (read as {}): give a file of 'name TYPE' lines, names, a BIND "
                         "query log or a Squid access.log".format(path, chosen))
    source = "{} {} ({} queries{})".format(chosen, label or path, len(queries),
                                           ", {} lines skipped".format(skipped) if skipped else "")
    return QueryList(queries, source, skipped)


# -- the built-in list: names people look up every day, a few types besides A, a few that do not exist -----------

_SITES = """
google.com youtube.com facebook.com wikipedia.org amazon.com instagram.com twitter.com x.com linkedin.com
reddit.com netflix.com microsoft.com apple.com yahoo.com bing.com office.com live.com github.com
stackoverflow.com whatsapp.com zoom.us dropbox.com adobe.com salesforce.com paypal.com ebay.com
cloudflare.com akamai.com fastly.com spotify.com twitch.tv tiktok.com pinterest.com tumblr.com
wordpress.org wordpress.com mozilla.org debian.org ubuntu.com kernel.org python.org pypi.org npmjs.com
docker.com gitlab.com bitbucket.org atlassian.com slack.com discord.com telegram.org signal.org
bbc.co.uk cnn.com nytimes.com theguardian.com spiegel.de lemonde.fr elpais.com corriere.it
booking.com airbnb.com tripadvisor.com expedia.com imdb.com weather.com accuweather.com
openstreetmap.org mapbox.com here.com duckduckgo.com startpage.com ecosia.org yandex.ru baidu.com
qq.com taobao.com alibaba.com aliexpress.com rakuten.co.jp naver.com samsung.com sony.com lg.com
hp.com dell.com lenovo.com intel.com amd.com nvidia.com cisco.com oracle.com ibm.com vmware.com
redhat.com suse.com digitalocean.com linode.com hetzner.com ovh.com scaleway.com vultr.com
letsencrypt.org digicert.com sectigo.com globalsign.com ietf.org iana.org icann.org ripe.net arin.net
w3.org mit.edu stanford.edu harvard.edu ox.ac.uk cam.ac.uk ethz.ch
"""
_SUBDOMAINS = ("www", "mail", "api", "cdn", "static", "login", "accounts", "docs", "status", "support")
_CDN = """
fonts.googleapis.com fonts.gstatic.com ajax.googleapis.com www.googletagmanager.com www.google-analytics.com
ssl.gstatic.com clients1.google.com update.googleapis.com safebrowsing.googleapis.com
connect.facebook.net graph.facebook.com static.xx.fbcdn.net scontent.xx.fbcdn.net
pbs.twimg.com abs.twimg.com i.ytimg.com yt3.ggpht.com s.ytimg.com
login.microsoftonline.com outlook.office365.com teams.microsoft.com settings-win.data.microsoft.com
ctldl.windowsupdate.com officecdn.microsoft.com.edgesuite.net
gateway.icloud.com mesu.apple.com swscan.apple.com time.apple.com ocsp.apple.com
images-na.ssl-images-amazon.com m.media-amazon.com s3.amazonaws.com ec2.amazonaws.com
cdn.jsdelivr.net unpkg.com cdnjs.cloudflare.com code.jquery.com stackpath.bootstrapcdn.com
ocsp.digicert.com crl3.digicert.com ocsp.sectigo.com r3.o.lencr.org x1.c.lencr.org
deb.debian.org security.debian.org archive.ubuntu.com security.ubuntu.com ntp.ubuntu.com
files.pythonhosted.org registry.npmjs.org proxy.golang.org crates.io index.crates.io
objects.githubusercontent.com raw.githubusercontent.com codeload.github.com registry-1.docker.io
pool.ntp.org 0.pool.ntp.org 1.pool.ntp.org 2.debian.pool.ntp.org time.cloudflare.com
"""
_OTHER_TYPES = (("gmail.com", "MX"), ("outlook.com", "MX"), ("yahoo.com", "MX"), ("gmx.net", "MX"),
                ("google.com", "TXT"), ("microsoft.com", "TXT"), ("github.com", "TXT"), ("debian.org", "TXT"),
                ("_dmarc.google.com", "TXT"), ("_dmarc.paypal.com", "TXT"),
                ("google.com", "NS"), ("wikipedia.org", "NS"), ("cloudflare.com", "NS"), ("example.com", "SOA"),
                ("_xmpp-server._tcp.jabber.org", "SRV"), ("_sip._udp.sip.linphone.org", "SRV"),
                ("_imaps._tcp.gmail.com", "SRV"), ("cloudflare.com", "HTTPS"), ("www.google.com", "HTTPS"),
                ("8.8.8.8.in-addr.arpa", "PTR"), ("1.1.1.1.in-addr.arpa", "PTR"), ("google.com", "CAA"))
# names that do not exist: a resolver answers NXDOMAIN (the names under .invalid never leave a good resolver)
_MISSING = ("no-such-host.example.com", "wpad.benchbay.invalid", "printer.benchbay.invalid",
            "doesnotexist-7f3a.example.org", "old-intranet.example.net", "typo-gooogle-search.example.com")


def builtin() -> List[Tuple[str, str]]:
    """A few hundred queries in a realistic mix: sites and their usual hosts (A and AAAA), CDNs and update
    servers, mail, text and service records, and a few names that do not exist. Fixed order, no randomness:
    the same list on every host."""
    sites = _SITES.split()
    out = []  # type: List[Tuple[str, str]]
    for i, site in enumerate(sites):
        out.append(("www." + site, "A"))
        out.append((site, "A"))
        if i % 2 == 0:
            out.append(("www." + site, "AAAA"))
        extra = _SUBDOMAINS[1 + i % (len(_SUBDOMAINS) - 1)]
        out.append(("{}.{}".format(extra, site), "A"))
    for i, name in enumerate(_CDN.split()):
        out.append((name, "A"))
        if i % 3 == 0:
            out.append((name, "AAAA"))
    out.extend(_OTHER_TYPES)
    out.extend((name, "A") for name in _MISSING)
    return out


def load(queries: str, fmt: str = "auto", limit: Optional[int] = None, label: str = "") -> QueryList:
    """ "builtin" or a file path; limit: the first N queries."""
    if queries == "builtin":
        chosen = builtin()[:limit] if limit else builtin()
        return QueryList(chosen, "builtin list ({} queries)".format(len(chosen)), 0)
    return read_file(queries, fmt, limit, label)
