"""The host's MTA as the mail storm sees it: type and version, queue depth, queue directory and filesystem.

Queue depth: `postqueue -j` (one JSON line per message), `exim -bpc` (a count) or `mailq` (Sendmail's
"Total requests", else the lines that start with a queue id), whichever exists. Commands that are missing
or fail give None and the reason (depth_or_why), never an error: Exim, for one, shows its queue only to
admin users.
"""
import os
import re
import shutil
import subprocess
import time
from typing import Any, Dict, List, Optional, Tuple  # noqa: F401 - some only in type comments

COMMAND_TIMEOUT = 30.0
SBIN = ("/usr/sbin", "/usr/local/sbin", "/sbin")
_MAILQ_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z-]{5,}[*!]?\s")
_MAILQ_TOTAL = re.compile(r"^\s*Total requests:\s*(\d+)\s*$", re.M)   # Sendmail


def which(name: str) -> Optional[str]:
    found = shutil.which(name)
    if found:
        return found
    for directory in SBIN:   # sbin is often missing from a non-login PATH
        path = os.path.join(directory, name)
        if os.access(path, os.X_OK):
            return path
    return None


def _run(argv: List[str], popen: Any = None) -> Tuple[Optional[str], str]:
    """(stdout, "") of argv, or (None, why) when it cannot run, fails or takes too long."""
    runner = popen or subprocess.Popen
    try:
        proc = runner(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as exc:
        return None, exc.strerror or str(exc)
    try:
        out, err = proc.communicate(timeout=COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return None, "no answer within {:g} s".format(COMMAND_TIMEOUT)
    if proc.returncode != 0:
        lines = [line.strip() for line in (err or b"").decode("utf-8", "replace").splitlines() if line.strip()]
        return None, lines[0][:200] if lines else "exit status {}".format(proc.returncode)
    return out.decode("utf-8", "replace"), ""


def _output(argv: List[str], popen: Any = None) -> Optional[str]:
    """stdout of argv, or None when it cannot run, fails or takes too long."""
    return _run(argv, popen)[0]


def detect() -> Dict[str, Any]:
    """{"mta", "version", "queue_dir", "queue_tool"}; empty strings for what cannot be found."""
    info = {"mta": "", "version": "", "queue_dir": "", "queue_tool": ""}  # type: Dict[str, Any]
    postconf = which("postconf")
    if postconf:
        version = _output([postconf, "-h", "mail_version"])
        if version is not None:
            info.update(mta="postfix", version=version.strip())
            info["queue_dir"] = (_output([postconf, "-h", "queue_directory"]) or "").strip()
            if which("postqueue"):
                info["queue_tool"] = "postqueue -j"
            return info
    exim = which("exim") or which("exim4")
    if exim:
        first = (_output([exim, "-bV"]) or "").splitlines()
        if first:
            match = re.search(r"version\s+(\S+)", first[0], re.I)
            info.update(mta="exim", version=match.group(1) if match else first[0].strip())
            info["queue_dir"] = (_output([exim, "-bP", "-n", "spool_directory"]) or "").strip()
            info["queue_tool"] = os.path.basename(exim) + " -bpc"
            return info
    sendmail = which("sendmail")
    if sendmail:
        info["mta"] = "sendmail-compatible"
        for line in (_output([sendmail, "-d0.1", "-bt"]) or "").splitlines():
            if line.startswith("Version"):
                info.update(mta="sendmail", version=line.split(None, 1)[-1].strip())
                break
        if os.path.isdir("/var/spool/mqueue"):
            info["queue_dir"] = "/var/spool/mqueue"
    if which("mailq"):
        info["queue_tool"] = "mailq"
    return info


def count_mailq(text: str) -> int:
    """Messages in `mailq` output: Sendmail's last "Total requests: N", else the lines that start a message."""
    totals = _MAILQ_TOTAL.findall(text)
    if totals:
        return int(totals[-1])
    if "is empty" in text.lower():
        return 0
    return sum(1 for line in text.splitlines() if _MAILQ_ID.match(line))


def _queue_argv(tool: str) -> Optional[List[str]]:
    if tool == "postqueue -j":
        path = which("postqueue")
        return [path, "-j"] if path else None
    if tool.endswith(" -bpc"):
        path = which(tool.split()[0])
        return [path, "-bpc"] if path else None
    if tool == "mailq":
        path = which("mailq")
        return [path] if path else None
    return None


def depth_or_why(tool: str, popen: Any = None) -> Tuple[Optional[int], str]:
    """(messages in the queue now, ""), or (None, why the tool gave no count)."""
    argv = _queue_argv(tool)
    if argv is None:
        return None, "{} is not installed".format(tool.split()[0] or "a queue tool")
    out, why = _run(argv, popen)
    if out is None:
        if tool.endswith(" -bpc") and "permission denied" in why.lower():
            why += " (Exim shows its queue only to admin users: root, or a user in Exim's group, " \
                   "Debian-exim on Debian)"
        return None, "{}: {}".format(tool, why)
    if tool == "postqueue -j":
        return sum(1 for line in out.splitlines() if line.strip()), ""
    if tool == "mailq":
        return count_mailq(out), ""
    try:
        return int(out.strip() or "0"), ""
    except ValueError:
        return None, "{}: not a count: {!r}".format(tool, out.strip()[:80])


def depth(tool: str, popen: Any = None) -> Optional[int]:
    """Messages in the queue now, or None when the tool is missing or fails."""
    return depth_or_why(tool, popen)[0]


def filesystem(path: str) -> Dict[str, Any]:
    """Mount point, type and source of the filesystem holding `path` (/proc/self/mountinfo), and its space."""
    out = {"path": path, "mount": "", "fstype": "", "source": ""}  # type: Dict[str, Any]
    if not path:
        return out
    real = os.path.realpath(path)
    best = ""
    try:
        with open("/proc/self/mountinfo") as handle:
            for line in handle:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) < 5 or len(tail) < 2:
                    continue
                mount = fields[4].replace("\\040", " ")
                inside = real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and len(mount) >= len(best):
                    best = mount
                    out.update(mount=mount, fstype=tail[0], source=tail[1])
    except OSError:
        pass
    try:
        st = os.statvfs(real)
        out["size_bytes"] = st.f_blocks * st.f_frsize
        out["free_bytes"] = st.f_bavail * st.f_frsize
        out["free_inodes"] = st.f_favail
    except OSError:
        pass
    return out


class QueuePoller:
    """Queue depth over time, never polled faster than every `every` seconds."""

    def __init__(self, ctx: Any, tool: str, every: float) -> None:
        self.ctx, self.tool, self.every = ctx, tool, every
        self.series = []  # type: List[List[float]]
        self.last = None  # type: Optional[float]
        self.start = time.monotonic()
        self.why = ""

    def due(self) -> bool:
        return bool(self.tool) and (self.last is None or time.monotonic() - self.last >= self.every)

    def wait_due(self) -> float:
        return 0.0 if self.last is None else max(self.every - (time.monotonic() - self.last), 0.0)

    def poll(self) -> Optional[int]:
        self.last = time.monotonic()
        value, self.why = depth_or_why(self.tool, self.ctx.popen)
        if value is not None:
            self.series.append([round(self.last - self.start, 3), value])
        return value
