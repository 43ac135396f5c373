"""The disk test's file: where it may go, whether it fits, writing it with real data, O_DIRECT support.

Safety rules (issue 4): never write to a block device or anything that is not a regular file inside
the test directory; check free space before writing one byte; the file is registered for removal
as soon as it is created, so a cancel at any moment leaves nothing behind. The file is created with
O_EXCL and only a file this process created (same device and inode) is ever removed: a file that was
there before, or was put in its place, is left alone. Each file created is also listed in RUN/created
at once, so the workbench can remove it after killing an agent that could not (remote.run_kill).
"""
import binascii
import contextlib
import errno
import mmap
import os
import stat
import struct
import tempfile
import time
from typing import Any, Callable, Dict, Optional, Tuple  # noqa: F401 - in a type comment

CHUNK = 4 << 20       # bytes per write while preparing: large sequential writes are fast
STAMP_EVERY = 4096    # a counter every 4 KiB: no two blocks alike, nothing deduplicates or compresses away
MARGIN = 16 << 20     # free space left over after the file: do not fill a filesystem to the last byte
FILE_PREFIX, FILE_SUFFIX, NAME_HEX = "benchbay-disk-", ".dat", 16   # the test file's name: prefix, hex, suffix
CREATED_LIST = "created"   # RUN/created: absolute paths of the test files this run created, one a line

# path -> (st_dev, st_ino, an open descriptor) of files we created; the descriptor keeps the inode
# from being freed and its number given to a file someone puts in place of ours
_created = {}  # type: Dict[str, Tuple[int, int, int]]


class DiskFileError(ValueError):
    """The file may not or cannot be written (outside the test dir, not a regular file, no room)."""


def free_bytes(directory: str) -> int:
    st = os.statvfs(directory)
    return st.f_bavail * st.f_frsize


def check_path(path: str, test_dir: str) -> str:
    """The absolute path when it is a safe place for the test file; DiskFileError otherwise."""
    if not os.path.isdir(test_dir):
        raise DiskFileError("test directory {} does not exist or is not a directory".format(test_dir))
    real_dir = os.path.realpath(test_dir)
    real_parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    full = os.path.join(real_parent, os.path.basename(path))
    if real_parent != real_dir and not real_parent.startswith(real_dir.rstrip("/") + "/"):
        raise DiskFileError("refusing {}: not inside the test directory {}".format(path, test_dir))
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return full
    if not stat.S_ISREG(st.st_mode):  # block devices, character devices, symlinks, directories ...
        raise DiskFileError("refusing {}: it exists and is not a regular file".format(path))
    return full


def check_space(path: str, size: int) -> None:
    existing = 0
    with contextlib.suppress(OSError):
        existing = os.lstat(path).st_size
    needed = size - existing + MARGIN
    free = free_bytes(os.path.dirname(path))
    if needed > free:
        raise DiskFileError(
            "not enough free space for the test file in {}: needs {} bytes ({} MiB incl. {} MiB margin), "
            "{} bytes ({} MiB) free".format(os.path.dirname(path), needed, needed >> 20, MARGIN >> 20,
                                            free, free >> 20))


def unique_file_name() -> str:
    """An unpredictable name: nobody can prepare a file or a link under it in advance."""
    return "{}{}{}".format(FILE_PREFIX, binascii.hexlify(os.urandom(NAME_HEX // 2)).decode("ascii"), FILE_SUFFIX)


def record_created(run_dir: str, path: str) -> None:
    """Append `path` to RUN/created and fsync it: the list survives an agent killed a moment later."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(os.path.join(run_dir, CREATED_LIST), flags, 0o600)
    try:
        data = (path + "\n").encode("utf-8", "surrogateescape")
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    finally:
        os.close(fd)


def fill_pattern(size: int) -> bytearray:
    return bytearray(os.urandom(size))


def prepare_file(path: str, size: int, ctx: Any = None, test_dir: Optional[str] = None,
                 on_progress: Optional[Callable[[float], None]] = None) -> str:
    """Write `size` bytes of real data to `path` (inside test_dir, default its directory), fsync it.

    Returns the absolute path. Raises DiskFileError before writing when refused (also when the path
    exists: it is not ours); Cancelled (from ctx) while writing when the run stops. The file is
    registered with ctx for removal right after it is created, before anything can be stopped.
    """
    if size <= 0:
        raise DiskFileError("file size must be positive, not {}".format(size))
    full = check_path(path, test_dir or os.path.dirname(os.path.abspath(path)))
    if "\n" in full:   # RUN/created holds one path a line
        raise DiskFileError("refusing {!r}: a line break in the path".format(full))
    if os.path.lexists(full):
        raise DiskFileError("refusing {}: it already exists and this run did not create it".format(full))
    check_space(full, size)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(full, flags, 0o600)
    except FileExistsError:  # appeared since the look above: still not ours
        raise DiskFileError("refusing {}: it already exists and this run did not create it".format(full)) from None
    try:
        st = os.fstat(fd)
        _created[full] = (st.st_dev, st.st_ino, os.dup(fd))
        if ctx is not None:
            ctx.add_cleanup_callback(lambda: remove_file(full))
            try:
                record_created(ctx.run_dir, full)
            except OSError as exc:   # unlisted, a killed agent's file would stay: the cleanup removes it
                raise DiskFileError("could not list the test file in {}: {}".format(
                    os.path.join(ctx.run_dir, CREATED_LIST), exc.strerror or exc)) from None
        block = fill_pattern(CHUNK)
        written, counter, last_progress = 0, 0, time.monotonic()
        while written < size:
            if ctx is not None:
                ctx.check()
            n = min(CHUNK, size - written)
            for offset in range(0, n, STAMP_EVERY):
                struct.pack_into("<Q", block, offset, counter)
                counter += 1
            view = memoryview(block)[:n]
            while view:
                done = os.write(fd, view)
                view = view[done:]
            written += n
            if on_progress is not None and time.monotonic() - last_progress > 0.5:
                last_progress = time.monotonic()
                on_progress(written / size)
        os.fsync(fd)
    finally:
        os.close(fd)
    return full


def check_own_file(path: str) -> None:
    """DiskFileError unless `path` is still a regular file, not a link, and the one this process created.

    For an engine that opens the file by its name (fio): someone who may write to the test directory
    could have put a link to another file or to a block device in its place.
    """
    try:
        st = os.lstat(path)
    except OSError as exc:
        raise DiskFileError("the test file {} is gone: {}".format(path, exc.strerror or exc)) from None
    identity = _created.get(path)
    if not stat.S_ISREG(st.st_mode) or (identity is not None and (st.st_dev, st.st_ino) != identity[:2]):
        raise DiskFileError("refusing {}: it is no longer the test file this run created".format(path))


def remove_file(path: str) -> None:
    """Remove the test file at `path` if this process created it and it is still that file."""
    identity = _created.pop(path, None)
    if identity is None:
        return
    dev, ino, keep = identity
    try:
        st = os.lstat(path)
        if (st.st_dev, st.st_ino) == (dev, ino):
            os.unlink(path)
    except FileNotFoundError:
        pass
    finally:
        os.close(keep)


def o_direct_supported(directory: str) -> bool:
    """Whether files in `directory` open with O_DIRECT and take an aligned read (tmpfs says EINVAL)."""
    o_direct = getattr(os, "O_DIRECT", 0)
    if not o_direct:
        return False
    fd, probe = tempfile.mkstemp(prefix=".benchbay-odirect-", dir=directory)
    try:
        os.write(fd, b"\0" * 4096)
        os.close(fd)
        fd = -1
        try:
            fd = os.open(probe, os.O_RDONLY | o_direct)
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return False
            raise
        buf = mmap.mmap(-1, 4096)
        try:
            os.lseek(fd, 0, os.SEEK_SET)
            os.readv(fd, [buf])
        except OSError as exc:
            if exc.errno == errno.EINVAL:
                return False
            raise
        finally:
            buf.close()
        return True
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):  # mkstemp made it (O_EXCL): it is ours
            os.unlink(probe)
