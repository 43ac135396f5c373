"""Setting a block device's read-ahead for the sweep and putting the original back (root only)."""
import os
import threading
from typing import Optional, Tuple


def queue_dir(directory: str) -> Optional[str]:
    """/sys/.../queue of the whole disk holding `directory` (a partition's parent), or None."""
    st = os.stat(directory)
    base = os.path.realpath("/sys/dev/block/{}:{}".format(os.major(st.st_dev), os.minor(st.st_dev)))
    if os.path.exists(os.path.join(base, "partition")):
        base = os.path.dirname(base)
    queue = os.path.join(base, "queue")
    return queue if os.path.exists(os.path.join(queue, "read_ahead_kb")) else None


class ReadAhead:
    def __init__(self, path: str, original: int) -> None:
        self.path = path
        self.original = original
        self._lock = threading.Lock()
        self._changed = False

    @classmethod
    def for_dir(cls, directory: str) -> Tuple[Optional["ReadAhead"], str]:
        """(ReadAhead, "") when the sweep can run, else (None, why not)."""
        if os.geteuid() != 0:
            return None, "needs root"
        queue = queue_dir(directory)
        if queue is None:
            return None, "{} is not on a block device with a read_ahead_kb setting".format(directory)
        path = os.path.join(queue, "read_ahead_kb")
        try:
            with open(path) as handle:
                original = int(handle.read().strip())
            with open(path, "w") as handle:  # can we write it at all? (a container's /sys is read-only)
                handle.write(str(original))
        except (OSError, ValueError) as exc:
            return None, "cannot change {}: {}".format(path, exc)
        return cls(path, original), ""

    def set(self, kb: int) -> None:
        with self._lock:
            self._changed = True
            with open(self.path, "w") as handle:
                handle.write(str(int(kb)))

    def restore(self) -> None:
        """Idempotent; called from the test's finally and from RunContext.cleanup()."""
        with self._lock:
            if self._changed:
                with open(self.path, "w") as handle:
                    handle.write(str(self.original))
                self._changed = False

    def current(self) -> int:
        with open(self.path) as handle:
            return int(handle.read().strip())
