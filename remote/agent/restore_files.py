"""File-level restore (no PostgreSQL): extract a generated .tar.gz of many small files, then sync.

The archive is built before the clock starts; extracting it and flushing it to disk is what is timed.
"""
import hashlib
import io
import os
import tarfile
import time
from typing import Any, Dict

FILE_BYTES = 8192          # average size of one file
FILES_PER_DIR = 500
MAX_FILES = 200000


def _content(index: int, size: int) -> bytes:
    """Half text, half digest bytes: compresses about as well as a home directory does."""
    seed = hashlib.sha256("benchbay-file-{}".format(index).encode()).digest()
    block = (seed.hex().encode() + seed) * (size // 96 + 1)
    return block[:size]


def make_archive(ctx: Any, path: str, size_mb: int, phase_id: str) -> Dict[str, int]:
    files = max(10, min(MAX_FILES, size_mb * 1024 * 1024 // FILE_BYTES))
    total = 0
    with tarfile.open(path, "w:gz", compresslevel=6) as tar:
        for i in range(files):
            if i % 200 == 0:
                ctx.check()
                ctx.progress(phase_id, i / files)
            size = FILE_BYTES // 2 + (i * 7919) % FILE_BYTES   # 4-12 KiB
            info = tarfile.TarInfo("d{:04d}/f{:06d}.dat".format(i // FILES_PER_DIR, i))
            info.size = size
            info.mtime = int(time.time())
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(_content(i, size)))
            total += size
    return {"files": files, "bytes": total, "archive_bytes": os.path.getsize(path)}


def extract(ctx: Any, archive: str, dest: str, files: int, phase_id: str) -> Dict[str, float]:
    """Extract (timed), then sync (timed); seconds of each."""
    t0 = time.monotonic()
    done = 0
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar:
            if member.name.startswith("/") or ".." in member.name.split("/"):
                raise RuntimeError("restore: unexpected member {!r} in the archive".format(member.name))
            tar.extract(member, dest)
            done += 1
            if done % 500 == 0:
                ctx.check()
                ctx.progress(phase_id, done / max(files, 1))
    t1 = time.monotonic()
    os.sync()
    t2 = time.monotonic()
    return {"extract_s": t1 - t0, "sync_s": t2 - t1, "total_s": t2 - t0}
