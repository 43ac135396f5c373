"""Where a run directory goes on a host: free space and writability of each candidate, first that fits.

Candidates, in order: the run directory the user set for the host, $TMPDIR, /tmp, /var/tmp, and last
~/.cache/benchbay. A home directory is often small, quota'd or on NFS, and a run there is easy to forget,
so it is used only when the user named it or when every other candidate is unusable. Free space comes
from `df -Pk` (POSIX output, every host has it); the choice is made here, not on the host, so it is the
same for every login shell and testable without one.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from remote.errors import RemoteCommandError
from remote.hostspec import LOCAL_HOST_NAME

RUN_DIR_HEADROOM = 1024 * 1024   # bytes a run needs beyond its uploads: telemetry, events, logs
HOME_RUN_BASE = ".cache/benchbay"

LABEL_CONFIGURED = "set for this host"
LABEL_TMPDIR = "$TMPDIR"
LABEL_HOME = "home"

# One line of `df -Pk` output: filesystem, 1024-blocks, used, available, capacity%, mount point
_DF_LINE = re.compile(r"\s(\d+)\s+(\d+)\s+(\d+)\s+(\d+)%\s+(/.*)$")


class NoSpaceError(RemoteCommandError):
    """No candidate directory has room (or can be written): the message says where and what to do."""


@dataclass(frozen=True)
class Candidate:
    label: str                   # where it came from: "run directory", "$TMPDIR", "/tmp", ...
    path: str
    state: str                   # ok | missing | notdir | readonly
    free_bytes: int | None       # None when df could not tell
    mount_point: str = ""

    def fits(self, need: int) -> bool:
        return self.state == "ok" and (self.free_bytes is None or self.free_bytes >= need)

    def why_not(self, need: int) -> str:
        """Why this candidate was passed over, in a few words."""
        if self.state == "missing":
            return f"{self.path} does not exist"
        if self.state == "notdir":
            return f"{self.path} is not a directory"
        if self.state == "readonly":
            return f"{self.path} is not writable"
        if self.free_bytes is not None and self.free_bytes < need:
            return f"{self.path} has {bytes_text(self.free_bytes)} free"
        return f"{self.path} could not be used"


@dataclass(frozen=True)
class RunDirChoice:
    path: str                            # the run directory created
    base: Candidate                      # where it was created
    passed_over: tuple[str, ...] = ()    # why earlier candidates were not used

    def note(self) -> str:
        """One line for the run's events: where the run directory is and why there."""
        where = f"the run directory is in {self.base.path}"
        if self.base.label != self.base.path:
            where += f" ({self.base.label})"
        if self.base.free_bytes is not None:
            where += f", {bytes_text(self.base.free_bytes)} free"
        if self.passed_over:
            where += "; not used: " + "; ".join(self.passed_over)
        return where


def bytes_text(count: int) -> str:
    """A size for remote's own messages (widgets.format.human_bytes is for what the window shows)."""
    value = float(count)
    for unit in ("bytes", "KB", "MB", "GB", "TB"):
        if value < 1024 or unit == "TB":
            return f"{value:.0f} {unit}" if unit in ("bytes", "KB") else f"{value:.1f} {unit}"
        value /= 1024
    return f"{count} bytes"


def parse_df(text: str) -> tuple[int, str] | None:
    """(available bytes, mount point) from `df -Pk` output, None when there is no data line.

    The filesystem name may hold spaces and so may the mount point: the numbers are found from
    the capacity column ("NN%"), which nothing before it can look like.
    """
    for line in text.splitlines()[1:]:
        match = _DF_LINE.search(" " + line.rstrip())
        if match:
            return int(match.group(3)) * 1024, match.group(5)
    return None


def probe_script(configured: str) -> str:
    """Shell code that describes each candidate: `@cand LABEL<tab>PATH`, `@state S`, then df's output."""
    lines = [
        "probe() {",
        "  printf '@cand %s\\t%s\\n' \"$1\" \"$2\"",
        "  if [ ! -e \"$3\" ]; then echo '@state missing'",
        "  elif [ ! -d \"$3\" ]; then echo '@state notdir'",
        "  elif [ ! -w \"$3\" ] || [ ! -x \"$3\" ]; then echo '@state readonly'",
        "  else echo '@state ok'; df -Pk \"$3\" 2>/dev/null; fi",
        "}",
        # the nearest directory that exists: where ~/.cache/benchbay would be made
        "existing() { p=$1; while [ ! -e \"$p\" ] && [ \"$p\" != / ]; do p=$(dirname \"$p\"); done; "
        "printf %s \"$p\"; }",
    ]
    if configured:
        path = _shell_path(configured)
        lines.append(f"probe {shlex.quote(LABEL_CONFIGURED)} {path} {path}")
    lines += [
        f"[ -n \"$TMPDIR\" ] && probe {shlex.quote(LABEL_TMPDIR)} \"$TMPDIR\" \"$TMPDIR\"",
        "probe /tmp /tmp /tmp",
        "probe /var/tmp /var/tmp /var/tmp",
        f"[ -n \"$HOME\" ] && h=\"$HOME\"/{HOME_RUN_BASE} && probe {LABEL_HOME} \"$h\" \"$(existing \"$h\")\"",
        "true",
    ]
    return "\n".join(lines)


def _shell_path(path: str) -> str:
    """A configured path for the shell: quoted, with a leading ~/ meaning the login user's home."""
    if path == "~":
        return "\"$HOME\""
    if path.startswith("~/"):
        return "\"$HOME\"/" + shlex.quote(path[2:])
    return shlex.quote(path)


def parse_probe(text: str) -> list[Candidate]:
    """The candidates as probe_script's output describes them, in order; a path seen twice counts once."""
    found: list[Candidate] = []
    label = path = state = ""
    df_lines: list[str] = []

    def flush() -> None:
        if not path:
            return
        parsed = parse_df("\n".join(df_lines)) if state == "ok" else None
        free, mount = parsed if parsed else (None, "")
        if path.rstrip("/") not in {c.path.rstrip("/") for c in found}:
            found.append(Candidate(label, path, state or "missing", free, mount))

    for line in text.splitlines():
        if line.startswith("@cand "):
            flush()
            label, _, path = line[len("@cand "):].partition("\t")
            state, df_lines = "", []
        elif line.startswith("@state "):
            state = line.split(" ", 1)[1].strip()
        elif path:
            df_lines.append(line)
    flush()
    return [c for c in found if c.path.startswith("/")]


def usable(candidates: list[Candidate], need: int) -> list[Candidate]:
    """The candidates that fit, best first; home only when the user named it or nothing else fits."""
    fitting = [c for c in candidates if c.fits(need)]
    preferred = [c for c in fitting if c.label != LABEL_HOME]
    return preferred or fitting


def no_space_message(host: str, candidates: list[Candidate], need: int) -> str:
    """The one line that says why no run directory could be made, and what to do."""
    reasons = "; ".join(c.why_not(need) for c in candidates) or "no candidate directory was found"
    full = [c for c in candidates if c.state == "ok" and c.free_bytes is not None and c.free_bytes < need]
    first = full[0].path if full else (candidates[0].path if candidates else "$TMPDIR")
    if host == LOCAL_HOST_NAME:   # `local` cannot be edited: its run directories follow TMPDIR
        advice = "or set TMPDIR to a directory with room"
    else:
        advice = f"or set a run directory for this host (host edit {host} --run-dir DIR)"
    return (f"{host}: no room for a run directory, which needs {bytes_text(need)} ({reasons}); "
            f"free space in {first}, {advice}")


def make_dir_script(base: str, prefix: str) -> str:
    """Shell code that makes a private (0700) directory in `base` and prints its path."""
    return ("umask 077; b=" + _shell_path(base) + "; mkdir -p \"$b\" || exit 1; "
            "d=$(mktemp -d \"$b\"/" + shlex.quote(prefix + "XXXXXXXX") + ") && chmod 700 \"$d\" && "
            "printf %s \"$d\"")


def run_dir_problem(path: str) -> str:
    """What is wrong with a run directory the user typed ("" when nothing is, or when it is unset)."""
    if not path:
        return ""
    if "\n" in path or "\r" in path:
        return "a directory name cannot hold a line break"
    if not (path.startswith("/") or path == "~" or path.startswith("~/")):
        return f"{path!r} is not an absolute path (or ~/...) on the host"
    return ""
