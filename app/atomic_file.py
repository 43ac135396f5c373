"""Files written whole or not at all: a crash or a full disk never leaves half a report or export under
the name the user chose. Shared by the PDF, the CSV and the JSON exports."""
from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from pathlib import Path


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


@contextlib.contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """A temporary file beside path to write into; synced and renamed over path when the block ends
    without an error, removed otherwise."""
    target = Path(path)
    temp = _temp_beside(target)
    try:
        yield temp
        with open(temp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, target)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


def write_text_atomically(path: str | Path, text: str) -> None:
    with atomic_path(path) as temp:
        temp.write_text(text, encoding="utf-8", newline="")
