"""dnsperf (DNS-OARC) for the maximum-throughput mode: its command, its version and its output read back.

dnsperf -v prints one line per query ("> NOERROR www.example.com A 0.000226", "> T name A" for a loss),
then its statistics ("Queries sent:", "Queries completed:", "Queries lost:", "Response codes: NOERROR 4
(66.67%), ...", "Run time (s):", "Queries per second:", "Average Latency (s): x (min y, max z)").
"""
import os
import re
import shutil
import subprocess
from typing import Any, Dict, List, Optional, Sequence, Tuple  # noqa: F401 - some only in type comments

from .common import EXTRA_TOOL_DIRS

INSTALL_HINT = "install dnsperf (Debian/Ubuntu package dnsperf) for dnsperf's figures"
_VERSION = re.compile(r"Version\s+(\d+(?:\.\d+)*)")
_TICK = re.compile(r"^(\d{9,}\.\d+): (\d+(?:\.\d+)?)\s*$")
_STAT = re.compile(r"^\s*([A-Za-z ()]+?):\s+(.*)$")


def find() -> Optional[str]:
    path = shutil.which("dnsperf")
    if path:
        return path
    for directory in EXTRA_TOOL_DIRS:
        candidate = os.path.join(directory, "dnsperf")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def version(path: str) -> str:
    """ "2.10.0" from dnsperf -h (it prints its version after the usage)."""
    try:
        proc = subprocess.run([path, "-h"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return ""
    found = _VERSION.search(proc.stdout.decode("utf-8", "replace"))
    return found.group(1) if found else ""


def argv(path: str, host: str, port: int, data_file: str, seconds: float, in_flight: int, rate: Optional[float],
         timeout: float, edns: bool) -> List[str]:
    out = [path, "-s", host, "-p", str(port), "-d", data_file, "-l", "{:g}".format(seconds),
           "-q", str(in_flight), "-t", "{:g}".format(timeout), "-S", "1", "-v"]
    if rate:
        out += ["-Q", str(int(rate))]
    if edns:
        out.append("-e")
    return out


def write_queries(path: str, queries: Sequence[Tuple[str, str]]) -> None:
    with open(path, "w") as handle:
        for name, qtype in queries:
            handle.write("{} {}\n".format(name, qtype))


def ticks(text: str) -> List[Tuple[float, float]]:
    """The -S 1 lines of a piece of output: (wall clock, queries per second)."""
    return [(float(m.group(1)), float(m.group(2))) for m in map(_TICK.match, text.splitlines()) if m]


def parse(text: str, resolver: str) -> Dict[str, Any]:
    """dnsperf's output: its statistics and the per-query records (latency in ms, None for a loss)."""
    records = []  # type: List[Dict[str, Any]]
    stats = {}  # type: Dict[str, str]
    ticks = []  # type: List[Tuple[float, float]]
    for line in text.splitlines():
        if line.startswith("> "):
            words = line[2:].split()
            if len(words) >= 3 and words[0] == "T":
                records.append({"name": words[1], "qtype": words[2], "resolver": resolver, "latency_ms": None,
                                "rcode": None, "tries": 1, "via": "udp"})
            elif len(words) >= 4:
                try:
                    ms = float(words[3]) * 1000.0
                except ValueError:
                    continue
                records.append({"name": words[1], "qtype": words[2], "resolver": resolver, "latency_ms": ms,
                                "rcode": words[0], "tries": 1, "via": "udp"})
            continue
        tick = _TICK.match(line)
        if tick:    # -S 1: "1795683340.854511: 499.395731", wall clock and queries per second
            ticks.append((float(tick.group(1)), float(tick.group(2))))
            continue
        found = _STAT.match(line)
        if found:
            stats[found.group(1).strip()] = found.group(2).strip()

    def number(key: str, default: float = 0.0) -> float:
        value = re.match(r"-?\d+(?:\.\d+)?", stats.get(key, ""))
        return float(value.group(0)) if value else default

    rcodes = {code: int(n) for code, n in re.findall(r"([A-Z]+) (\d+) \(", stats.get("Response codes", ""))}
    latency = re.match(r"([\d.]+) \(min ([\d.]+), max ([\d.]+)\)", stats.get("Average Latency (s)", ""))
    return {"sent": int(number("Queries sent")), "completed": int(number("Queries completed")),
            "lost": int(number("Queries lost")), "rcodes": rcodes, "run_s": number("Run time (s)"),
            "qps": number("Queries per second"),
            "mean_ms": float(latency.group(1)) * 1000 if latency else None,
            "min_ms": float(latency.group(2)) * 1000 if latency else None,
            "max_ms": float(latency.group(3)) * 1000 if latency else None,
            "records": records, "ticks": ticks, "has_stats": "Queries sent" in stats}
