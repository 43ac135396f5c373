"""Which benchmark engines and servers the host has, with versions: fio, the MTA, PostgreSQL, iostat, dnsperf."""
import re
from typing import Dict, List, Optional, Sequence

from .common import Collector, one_line, run_command, which, which_glob

_VERSION = re.compile(r"(\d+(?:\.\d+)+[a-z]?|\d+)")


def first_version(text: str, after: str = "") -> Optional[str]:
    """The first dotted version number in `text` (after the marker `after`, when given)."""
    if after:
        index = text.find(after)
        if index < 0:
            return None
        text = text[index + len(after):]
    match = _VERSION.search(text)
    return match.group(1) if match else None


def _tool(present: bool, version: Optional[str] = None, path: Optional[str] = None) -> Dict[str, object]:
    return {"present": present, "version": version, "path": path}


def _output(argv: Sequence[str]) -> str:
    """stdout and stderr together: several tools print their version on stderr."""
    _status, out, err = run_command(argv)
    return out + "\n" + err


def probe_fio(collector: Collector) -> Dict[str, object]:
    path = which("fio")
    if not path:
        return _tool(False)
    text = collector.guard("tools.fio", lambda: _output([path, "--version"]), "") or ""
    return _tool(True, first_version(text, "fio-"), path)


def probe_dnsperf(collector: Collector) -> Dict[str, object]:
    """DNS-OARC's dnsperf (the dns test's max mode): it prints "Version 2.10.0" after its usage."""
    path = which("dnsperf")
    if not path:
        return _tool(False)
    text = collector.guard("tools.dnsperf", lambda: _output([path, "-h"]), "") or ""
    return _tool(True, first_version(text, "Version"), path)


def probe_iostat(collector: Collector) -> Dict[str, object]:
    path = which("iostat")
    if not path:
        return _tool(False)
    version = collector.guard("tools.iostat", lambda: first_version(_output([path, "-V"]), "version"))
    return _tool(True, version, path)


def _postfix_version(postconf: str) -> Optional[str]:
    status, out, _err = run_command([postconf, "-h", "mail_version"])
    if status == 0 and out.strip():
        return first_version(out)
    return first_version(_output([postconf, "mail_version"]), "=")


def probe_mta(collector: Collector) -> Dict[str, object]:
    """Postfix, then Exim, then Sendmail; a `sendmail` that is none of them (msmtp, nullmailer...)
    is present with type null."""
    postconf = which("postconf")
    if postconf:
        result = _tool(True, collector.guard("tools.mta", lambda: _postfix_version(postconf)), postconf)
        result["type"] = "postfix"
        return result
    exim = which("exim") or which("exim4")
    if exim:
        version = collector.guard("tools.mta", lambda: first_version(_output([exim, "-bV"]), "Exim version"))
        result = _tool(True, version, exim)
        result["type"] = "exim"
        return result
    sendmail = which("sendmail")
    if sendmail:
        # -d0.1 prints the version banner; -bt with stdin at /dev/null returns at once
        text = collector.guard("tools.mta", lambda: _output([sendmail, "-d0.1", "-bt"]), "") or ""
        version = first_version(text, "Version ")
        result = _tool(True, version, sendmail)
        result["type"] = "sendmail" if version else None
        return result
    result = _tool(False)
    result["type"] = None
    return result


def _postgres_candidates() -> List[List[str]]:
    """Ways to learn the installed PostgreSQL version, most authoritative first."""
    candidates = []
    for name in ("postgres", "pg_config", "psql"):
        found = which(name)
        if found:
            candidates.append([found, "--version"])
    for found in which_glob("/usr/lib/postgresql/*/bin/postgres") + which_glob("/usr/pgsql-*/bin/postgres"):
        candidates.append([found, "--version"])
    return candidates


def probe_postgresql(collector: Collector) -> Dict[str, object]:
    candidates = _postgres_candidates()
    errors = []
    # the server binary first (often outside PATH), then client tools
    candidates.sort(key=lambda argv: 0 if argv[0].endswith("/postgres") else 1)
    for argv in candidates:
        try:
            version = first_version(_output(argv), "PostgreSQL")
        except Exception as exc:
            errors.append("{}: {}".format(argv[0], exc))
            continue
        if version:
            return _tool(True, version, argv[0])
    if errors:
        collector.error("tools.postgresql", one_line("; ".join(errors)))
    if candidates:
        return _tool(True, None, candidates[0][0])
    return _tool(False)


def gather_tools(collector: Collector) -> Dict[str, object]:
    return {
        "fio": collector.guard("tools.fio", lambda: probe_fio(collector), _tool(False)),
        "mta": collector.guard("tools.mta", lambda: probe_mta(collector), dict(_tool(False), type=None)),
        "postgresql": collector.guard("tools.postgresql", lambda: probe_postgresql(collector), _tool(False)),
        "iostat": collector.guard("tools.iostat", lambda: probe_iostat(collector), _tool(False)),
        "dnsperf": collector.guard("tools.dnsperf", lambda: probe_dnsperf(collector), _tool(False)),
    }
