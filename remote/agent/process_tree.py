"""Every process a run started, found and killed, including those that left the agent's process group.

fio calls setsid() for each job process, so killing fio's process group leaves its jobs doing I/O.
Two ways to find them, because each can miss what the other finds:
- parent links in /proc/*/stat, from the agent down. As a child subreaper (Linux >= 3.4) the agent
  adopts the orphans of its descendants, so a child that dies does not cut its children loose.
- a mark in the environment (RUN_MARK_VAR) that every process the agent starts inherits, unless it
  clears its environment (sudo does; its children are still found by their parent links).
"""
import contextlib
import os
import posixpath
import signal
import time
from typing import Dict, Optional, Set, Tuple

RUN_MARK_VAR = "BENCHBAY_RUN"
PR_SET_CHILD_SUBREAPER = 36
KILL_ROUNDS = 40           # walks of /proc before giving up on processes that do not die
KILL_PAUSE = 0.05          # seconds between walks: lets SIGKILL land and orphans be re-parented


def run_mark(run_dir: str) -> str:
    """The mark's value: the run directory with a trailing slash, so no other run's mark contains it.

    Normalised as the agent's os.path.abspath does: mktemp may print /tmp//benchbay-... (TMPDIR=/tmp/).
    """
    return posixpath.normpath(run_dir).rstrip("/") + "/"


def mark_environment(run_dir: str) -> None:
    os.environ[RUN_MARK_VAR] = run_mark(run_dir)


def become_subreaper() -> bool:
    """Adopt orphaned descendants (prctl); False where prctl or the option is unavailable."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError, ImportError):
        return False
    try:
        return prctl(PR_SET_CHILD_SUBREAPER, ctypes.c_ulong(1), ctypes.c_ulong(0), ctypes.c_ulong(0),
                     ctypes.c_ulong(0)) == 0
    except Exception:  # a libc without a usable prctl: the environment mark still finds them
        return False


def process_table() -> Dict[int, Tuple[int, str]]:
    """pid -> (parent pid, state letter) for every process visible in /proc."""
    table = {}  # type: Dict[int, Tuple[int, str]]
    try:
        names = os.listdir("/proc")
    except OSError:
        return table
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(name), "rb") as handle:
                text = handle.read().decode("ascii", "replace")
            # the command name may hold spaces and parentheses: the fields start after the last ")"
            fields = text.rsplit(")", 1)[1].split()
            table[int(name)] = (int(fields[1]), fields[0])
        except (OSError, IndexError, ValueError):
            continue  # it exited while we looked
    return table


def descendants(root: int, table: Dict[int, Tuple[int, str]]) -> Set[int]:
    children = {}  # type: Dict[int, list]
    for pid, (ppid, _state) in table.items():
        children.setdefault(ppid, []).append(pid)
    found = set()  # type: Set[int]
    todo = list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if pid not in found and pid != root:
            found.add(pid)
            todo.extend(children.get(pid, []))
    return found


def has_mark(pid: int, mark: str) -> bool:
    entry = "{}={}".format(RUN_MARK_VAR, mark).encode("utf-8", "surrogateescape")
    try:
        with open("/proc/{}/environ".format(pid), "rb") as handle:
            return entry in handle.read().split(b"\0")
    except OSError:  # another user's process, or gone
        return False


def run_processes(root: int, mark: Optional[str] = None) -> Set[int]:
    """Live (not zombie) processes below `root` or carrying `mark`; never `root` itself."""
    table = process_table()
    found = descendants(root, table)
    if mark:
        found.update(pid for pid in table if pid not in found and has_mark(pid, mark))
    found.discard(root)
    found.discard(os.getpid())
    return {pid for pid in found if table.get(pid, (0, "Z"))[1] not in ("Z", "X")}


def kill_run_processes(root: Optional[int] = None, mark: Optional[str] = None) -> Set[int]:
    """SIGKILL every process of the run, walking again until none is left; returns the survivors.

    Survivors are processes that SIGKILL could not end in time (stuck in uninterruptible I/O) or
    that belong to another user (a child run through sudo).
    """
    root = os.getpid() if root is None else root
    if mark is None:
        mark = os.environ.get(RUN_MARK_VAR) or None
    for _ in range(KILL_ROUNDS):
        left = run_processes(root, mark)
        if not left:
            return left
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(KILL_PAUSE)
    return run_processes(root, mark)
