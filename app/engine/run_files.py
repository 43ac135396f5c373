"""Files a run takes from the workbench to the host: a dns query list named by a local path.

`--set queries=FILE` where FILE exists on the workbench: the file is read here and uploaded into the run's
private directory with the agent, and the agent is told `queries=upload:NAME`. A path that does not exist
on the workbench is the host's (the agent checks it there); `host:/path` says so explicitly.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

MAX_UPLOAD_BYTES = 256 << 20   # the agent reads no larger list (remote/agent/dns_queries.MAX_FILE_BYTES)
HOST_PREFIX = "host:"
UPLOAD_PREFIX = "upload:"      # remote/agent/bench_dns.UPLOAD_PREFIX


class FilesError(ValueError):
    """A local file named for the run cannot be read or is too large."""


def upload_name(path: Path) -> str:
    """ "queries-access.log": the file's own name, safe as a plain file name in the run directory."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", path.name).lstrip(".") or "list"
    return f"queries-{safe[:80]}"


def with_files(request: Any) -> Any:
    """The request with a local query list read and attached (files), its parameter pointing at the upload."""
    if request.test != "dns" or request.files:
        return request
    value = request.params.get("queries")
    if not isinstance(value, str) or value in ("", "builtin") or value.startswith(UPLOAD_PREFIX):
        return request
    if value.startswith(HOST_PREFIX):
        return replace(request, params={**request.params, "queries": value[len(HOST_PREFIX):]})
    path = Path(value).expanduser()
    if not path.is_file():
        return request    # the host's path: the agent says when it is not there either
    try:
        size = path.stat().st_size
        if size > MAX_UPLOAD_BYTES:
            raise FilesError(f"the query list {path} is larger than {MAX_UPLOAD_BYTES >> 20} MB: give fewer lines "
                             "(or limit=N and a shorter file)")
        data = path.read_bytes()
    except OSError as exc:
        raise FilesError(f"cannot read the query list {path}: {exc.strerror or exc}") from None
    name = upload_name(path)
    return replace(request, params={**request.params, "queries": UPLOAD_PREFIX + name}, files=((name, data),),
                   file_sources=((name, str(path.resolve()), len(data), hashlib.sha256(data).hexdigest()),))


def files_record(request: Any) -> list[dict[str, Any]]:
    """What the run's record keeps of its uploads: name, where it came from, size, SHA-256 (not the content)."""
    return [{"name": name, "source": source, "bytes": size, "sha256": digest}
            for name, source, size, digest in getattr(request, "file_sources", ())]
