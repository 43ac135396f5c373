"""Files written whole or not at all: a crash or a full disk never leaves half a report or export under
the name the user chose. Shared by the PDF, the CSV and the JSON exports.

A regular file (or a new name) is replaced by renaming a finished temporary file over it. A symlink is
written through: the temporary file goes beside the file it points to, so the link stays a link. A
character device or a FIFO (/dev/stdout, /dev/full, a named pipe) cannot be renamed over: the finished
bytes are copied into it, and its errors (ENOSPC from /dev/full) reach the caller as OSError.
A symlink another user planted in a sticky world-writable directory (/tmp) is refused (PermissionError),
as fs.protected_symlinks refuses it to open(): realpath() and rename() would follow it anywhere.
"""
from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

COPY_CHUNK = 1 << 20


def _temp_beside(path: Path) -> Path:
    """An empty new file next to path (same filesystem, so the rename is atomic); the umask applies,
    unlike mkstemp's 0600: an export is an ordinary file."""
    for _attempt in range(20):
        temp = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            with open(temp, "x"):
                return temp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def _check_links(path: Path) -> None:
    """PermissionError when path leads through a link someone else owns in a sticky world-writable dir."""
    for _hop in range(40):
        try:
            link = os.lstat(path)
        except FileNotFoundError:
            return
        if not stat.S_ISLNK(link.st_mode):
            return
        folder = os.stat(path.parent)
        shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
        if shared and link.st_uid not in (os.geteuid(), folder.st_uid):
            raise PermissionError(errno.EACCES, "a link another user owns in a shared directory; not followed",
                                  str(path))
        path = path.parent / os.readlink(path)


def _written_in_place(path: Path) -> bool:
    """True for an existing target that must be written into, not replaced: a device, a FIFO, a socket,
    or any name under /dev or /proc (/dev/stdout resolves to /proc/self/fd/1, perhaps a pipe or a file
    the shell opened for appending)."""
    try:
        mode = os.stat(path).st_mode   # follows symlinks
    except FileNotFoundError:
        return False
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR) + "; name a file", str(path))
    return not stat.S_ISREG(mode) or Path(os.path.abspath(path)).parts[1:2] in (("dev",), ("proc",))


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file to write into; when the block ends without an error it is synced and renamed
    over path (or copied into path when that is a device or a FIFO), and removed in every case."""
    given = Path(path)
    _check_links(given)
    special = _written_in_place(given)
    # realpath, not resolve(): a symlink loop then fails as ELOOP when the file is opened (an OSError).
    target = given if special else Path(os.path.realpath(given))
    if special:
        handle, name = tempfile.mkstemp(prefix="benchbay-", suffix=".tmp")
        os.close(handle)
        temp = Path(name)
    else:
        temp = _temp_beside(target)
    try:
        yield temp
        if special:
            # append: a file reached through /dev/stdout keeps what the shell and this process wrote before
            with open(temp, "rb") as source, open(target, "ab") as sink:
                shutil.copyfileobj(source, sink, COPY_CHUNK)
        else:
            with open(temp, "rb+") as handle_:
                os.fsync(handle_.fileno())
            os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


@contextlib.contextmanager
def atomic_text(path: str | Path) -> Iterator[TextIO]:
    """A UTF-8 text handle whose content replaces path as a whole when the block ends without an error."""
    with atomic_path(path) as temp, open(temp, "w", encoding="utf-8", newline="") as handle:
        yield handle


def write_text_atomically(path: str | Path, text: str) -> None:
    with atomic_text(path) as handle:
        handle.write(text)
