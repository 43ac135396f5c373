"""A symlink someone else planted in a shared directory (/tmp) is not written through: as the kernel's
fs.protected_symlinks does for open(), which realpath() and rename() never ask."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from app.util.atomic_file import write_text_atomically

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="a link owned by another user needs root to make")
NOBODY = 65534


def _shared(tmp_path: Path) -> Path:
    shared = tmp_path / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)   # as /tmp: anyone may create, only the owner may remove
    return shared


@needs_root
def test_a_link_planted_by_another_user_in_a_sticky_directory_is_refused(tmp_path: Path) -> None:
    victim_dir = tmp_path / "etc"
    victim_dir.mkdir()
    victim = victim_dir / "shadow"
    victim.write_text("secret\n")
    shared = _shared(tmp_path)
    link = shared / "report.csv"
    link.symlink_to(victim)
    os.lchown(link, NOBODY, NOBODY)
    with pytest.raises(PermissionError):
        write_text_atomically(link, "a,b\n")
    assert victim.read_text() == "secret\n" and sorted(p.name for p in victim_dir.iterdir()) == ["shadow"]
    dangling = shared / "new.csv"                        # to a file that does not exist yet: not created
    dangling.symlink_to(victim_dir / "cron")
    os.lchown(dangling, NOBODY, NOBODY)
    with pytest.raises(PermissionError):
        write_text_atomically(dangling, "a,b\n")
    assert sorted(p.name for p in victim_dir.iterdir()) == ["shadow"]


def test_own_links_in_a_sticky_directory_are_written_through(tmp_path: Path) -> None:
    target = tmp_path / "real.csv"
    target.write_text("old")
    link = _shared(tmp_path) / "mine.csv"
    link.symlink_to(target)
    write_text_atomically(link, "a,b\n")
    assert link.is_symlink() and target.read_text() == "a,b\n"
