"""The test file swapped for a symlink after it was made (someone else who may write to the test dir):
neither engine writes through the link, to a file elsewhere or, as root, to a block device."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from remote.agent import disk_builtin, disk_fio
from remote.agent.disk_file import prepare_file, remove_file, unique_file_name

ENGINES = [disk_builtin] + ([disk_fio] if shutil.which("fio") else [])
SIZE = 1 << 20


@pytest.mark.parametrize("engine", ENGINES, ids=lambda e: e.__name__.rsplit(".", 1)[-1])
def test_a_test_file_swapped_for_a_link_is_not_written_through(engine: object, tmp_path: Path) -> None:
    test_dir = tmp_path / "shared"
    test_dir.mkdir()
    victim = tmp_path / "victim.dat"
    victim.write_bytes(b"v" * SIZE)
    path = prepare_file(str(test_dir / unique_file_name()), SIZE, None, str(test_dir))
    try:
        os.unlink(path)
        os.symlink(str(victim), path)
        job = {"name": "syncwrite_4k", "file": path, "size": SIZE, "direct": False, "runtime": 0.3, "warmup": 0.0,
               "workers": 1, "rw": "randwrite", "bs": 4096, "sync": "none"}
        with pytest.raises((OSError, ValueError, RuntimeError)):
            engine.run_job(job, None, direct=False)
        assert victim.read_bytes() == b"v" * SIZE
    finally:
        remove_file(path)
