"""Small defensive helpers shared by the fact gatherers: reading files, running tools, collecting errors."""
import contextlib
import errno
import glob
import os
import signal
import subprocess
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

NEEDS_ROOT = "needs root"
COMMAND_TIMEOUT = 5.0  # seconds for any one probe command: facts must never hang
EXTRA_TOOL_DIRS = ("/usr/sbin", "/sbin", "/usr/local/sbin")

# Missing or meaningless attributes read as None; permission problems are reported separately.
_ABSENT_ERRNOS = (errno.ENOENT, errno.ENOTDIR, errno.ENODEV, errno.ENXIO, errno.EINVAL, errno.EIO,
                  errno.EOPNOTSUPP)


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Collector:
    """Accumulates the "errors" and "needs_root" lists of one facts document."""

    def __init__(self, is_root: Optional[bool] = None) -> None:
        self.is_root = (os.geteuid() == 0) if is_root is None else is_root
        self.errors = []  # type: List[str]
        self.needs_root = []  # type: List[str]

    def error(self, fact: str, exc: object) -> None:
        detail = "{}: {}".format(type(exc).__name__, exc) if isinstance(exc, BaseException) else str(exc)
        self.errors.append(one_line("{}: {}".format(fact, detail)))

    def need_root(self, fact: str) -> str:
        if fact not in self.needs_root:
            self.needs_root.append(fact)
        return NEEDS_ROOT

    def guard(self, fact: str, func: Callable, default: object = None) -> object:
        """Run one gatherer; any failure becomes an entry in errors and the default value."""
        try:
            return func()
        except Exception as exc:  # the agent reports, it never crashes
            self.error(fact, exc)
            return default


def read_text(path: str) -> Optional[str]:
    """The file's text, or None when it does not exist or cannot be read; PermissionError propagates."""
    try:
        with open(path, "rb") as handle:
            return handle.read().decode("utf-8", "replace")
    except PermissionError:
        raise
    except OSError as exc:
        if exc.errno in _ABSENT_ERRNOS:
            return None
        raise


def read_attr(path: str) -> Optional[str]:
    """A one-value sysfs/proc attribute, stripped; None when absent, empty or unreadable."""
    try:
        text = read_text(path)
    except OSError:
        return None
    if text is None:
        return None
    text = text.strip()
    return text or None


def read_int(path: str) -> Optional[int]:
    value = read_attr(path)
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def read_private(collector: Collector, path: str, fact: str) -> Optional[str]:
    """An attribute only root may read (serial numbers): "needs root" when we are not root."""
    try:
        text = read_text(path)
    except PermissionError:
        if collector.is_root:
            collector.error(fact, "permission denied reading " + path)
            return None
        return collector.need_root(fact)
    except OSError as exc:
        collector.error(fact, exc)
        return None
    if text is None:
        return None
    return text.strip() or None


def which(name: str) -> Optional[str]:
    """Like `command -v`, but also looks where admin tools live when PATH lacks the sbin dirs."""
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep) if d]
    dirs.extend(d for d in EXTRA_TOOL_DIRS if d not in dirs)
    for directory in dirs:
        candidate = os.path.join(directory, name)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def which_glob(pattern: str) -> List[str]:
    """Executables matching a glob (e.g. versioned PostgreSQL bin dirs), newest version first."""
    found = [p for p in glob.glob(pattern) if os.path.isfile(p) and os.access(p, os.X_OK)]
    return sorted(found, key=_version_key, reverse=True)


def _version_key(path: str) -> Tuple:
    parts = []
    for piece in path.replace("-", "/").replace(".", "/").split("/"):
        parts.append((1, int(piece), "") if piece.isdigit() else (0, 0, piece))
    return tuple(parts)


def run_command(argv: Sequence[str], timeout: Optional[float] = None) -> Tuple[int, str, str]:
    """Run a probe; (exit status, stdout, stderr). Raises OSError if it cannot start,
    RuntimeError if it outlives the timeout (after killing its whole process group)."""
    if timeout is None:
        timeout = COMMAND_TIMEOUT
    env = dict(os.environ)
    env["LC_ALL"] = "C"  # stable, parseable messages
    proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        # if something escaped the group and holds the pipes, give up on its output
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.communicate(timeout=2)
        raise RuntimeError(
            "{} did not finish within {:g} s".format(os.path.basename(argv[0]), timeout)) from None
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _kill_group(proc: "subprocess.Popen") -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        with contextlib.suppress(OSError):
            proc.kill()


# -- a full disk ------------------------------------------------------------------------------------

NO_SPACE_ERRNOS = (errno.ENOSPC, errno.EDQUOT)


def no_space_error(exc: BaseException) -> Optional[OSError]:
    """The ENOSPC/EDQUOT OSError behind `exc` (itself, or what it was raised from), else None."""
    seen = 0
    current = exc  # type: Optional[BaseException]
    while current is not None and seen < 10:
        if isinstance(current, OSError) and current.errno in NO_SPACE_ERRNOS:
            return current
        current = current.__cause__ or current.__context__
        seen += 1
    return None


def no_space_message(exc: BaseException, default_dir: str) -> Optional[str]:
    """'no space left on device in DIR while writing FILE' for a full disk, else None."""
    found = no_space_error(exc)
    if found is None:
        return None
    reason = "no space left on device" if found.errno == errno.ENOSPC else "disk quota exceeded"
    path = found.filename if isinstance(found.filename, str) else ""
    directory = os.path.dirname(os.path.abspath(path)) if path else default_dir
    return "{} in {} while writing {}".format(reason, directory, os.path.basename(path) if path else "a file")


# -- per-interval rates (a figure's spread within its run) -----------------------------------------

RATE_INTERVAL = 1.0      # seconds per interval of a rate's series
MIN_INTERVALS = 5        # a window shorter than this many seconds is cut into this many intervals
MIN_RATE_INTERVAL = 0.01   # 10 ms: a storm of a few hundred messages may last a quarter second


def rate_interval(window_s: float) -> float:
    """1 s, or less for a short window so that it still gives MIN_INTERVALS intervals."""
    if window_s >= RATE_INTERVAL * MIN_INTERVALS:
        return RATE_INTERVAL
    # not rounded: MIN_INTERVALS of them cover the window exactly, up to its last event
    return max(float(window_s) / MIN_INTERVALS, MIN_RATE_INTERVAL)


def interval_count(window_s: float, interval: float) -> int:
    """How many whole intervals fit in the window (a partial last one would read low)."""
    if interval <= 0 or window_s <= 0:
        return 0
    return int(float(window_s) / interval + 1e-6)


def bucket_counts(times: Sequence[float], start: float, count: int, interval: float) -> List[float]:
    """How many of `times` fell in each of `count` intervals from start; a time exactly at the end of
    the last interval (the last accept ends the window) counts in it."""
    buckets = [0.0] * count
    end = start + count * interval
    for t in times:
        if t < start or t > end + 1e-9:
            continue
        buckets[min(int((t - start) / interval), count - 1)] += 1.0
    return buckets


def spread_spans(spans: Sequence[Tuple[float, float]], start: float, count: int, interval: float) -> List[float]:
    """Work units done in each interval when one unit is done evenly over each (begin, end) span: an op
    of 0.3 s that straddles two intervals counts partly in each, so slow ops give smooth rates."""
    buckets = [0.0] * count
    end = start + count * interval
    for begin, finish in spans:
        length = finish - begin
        if finish <= start or begin >= end:
            continue
        if length <= 0:
            buckets[min(int((begin - start) / interval), count - 1)] += 1.0
            continue
        first = max(int((max(begin, start) - start) / interval), 0)
        last = min(int((min(finish, end) - start) / interval), count - 1)
        for index in range(first, last + 1):
            low = max(begin, start + index * interval)
            high = min(finish, start + (index + 1) * interval)
            if high > low:
                buckets[index] += (high - low) / length
    return buckets


def rates(amounts: Sequence[float], interval: float, t0: float, scale: float = 1.0) -> Dict[str, Any]:
    """A result's per-interval rates as the workbench reads them: amount per interval / interval, times
    `scale`; t0 is the wall clock (time.time()) at the start of the first interval."""
    return {"interval_s": round(float(interval), 6), "t0": round(float(t0), 6),
            "values": [round(a * scale / interval, 6) for a in amounts]}


def emit_result(ctx: Any, test: str, metric: str, value: float, unit: str, metadata: Dict[str, Any],
                per_interval: Optional[Dict[str, Any]] = None) -> None:
    """ctx.result, with the figure's per-interval rates when there are any (and a context that can
    write them: one that only takes results gets the figure alone)."""
    emit = getattr(ctx, "emit", None)
    if not per_interval or not per_interval.get("values") or emit is None:
        ctx.result(test, metric, value, unit, metadata)
        return
    emit("result", test=test, metric=metric, value=float(value), unit=unit, metadata=metadata or {},
         rates=per_interval)
