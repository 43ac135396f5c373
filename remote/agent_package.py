"""The agent as one uploadable file: a zipapp built from remote/agent/ on the fly.

The archive is deterministic (fixed timestamps and modes, sorted names), so the same sources
always give the same bytes and the same hash on every workstation.
"""
from __future__ import annotations

import io
import threading
import zipfile
from pathlib import Path

from remote.agent import AGENT_VERSION

__all__ = ["AGENT_VERSION", "AGENT_PACKAGE_NAME", "build_agent", "agent_sources"]

AGENT_PACKAGE_NAME = "benchbay_agent"  # the package name inside the zip, distinct from remote.agent
_AGENT_DIR = Path(__file__).resolve().parent / "agent"
_ZIP_TIMESTAMP = (1980, 1, 1, 0, 0, 0)  # the earliest date a zip can hold
_SHEBANG = b"#!/usr/bin/env python3\n"
_MAIN = (
    "# Benchbay agent " + AGENT_VERSION + "\n"
    "import sys\n"
    "from " + AGENT_PACKAGE_NAME + ".cli import main\n"
    "sys.exit(main())\n"
).encode()

_cache: dict[tuple, bytes] = {}
_cache_lock = threading.Lock()  # one build at a time: hosts start their runs from parallel workers


def agent_sources(agent_dir: Path = _AGENT_DIR) -> dict[str, bytes]:
    """Archive name -> content for every agent module (only *.py: no caches, no tool configs)."""
    return {
        f"{AGENT_PACKAGE_NAME}/{path.name}": path.read_bytes()
        for path in sorted(agent_dir.glob("*.py"))
    }


def pack(sources: dict[str, bytes]) -> bytes:
    """A runnable zipapp holding `sources` plus a top-level __main__.py."""
    buffer = io.BytesIO()
    buffer.write(_SHEBANG)
    entries = dict(sources)
    entries["__main__.py"] = _MAIN
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in sorted(entries):
            info = zipfile.ZipInfo(name, date_time=_ZIP_TIMESTAMP)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            info.create_system = 3  # Unix, whatever the workstation
            archive.writestr(info, entries[name])
    return buffer.getvalue()


def build_agent() -> bytes:
    """The agent zipapp; rebuilt only when a source file changed (cheap stat check)."""
    paths = sorted(_AGENT_DIR.glob("*.py"))
    key = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in paths)
    with _cache_lock:
        if key not in _cache:
            _cache.clear()
            _cache[key] = pack(agent_sources())
        return _cache[key]
