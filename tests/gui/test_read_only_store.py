"""A store on a read-only mount: the window opens it, shows what it holds, and says that nothing is saved."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from remote.hostspec import HostSpec


@pytest.fixture
def read_only_store(tmp_path: Path) -> Iterator[Path]:
    """A store holding one host, then mounted read-only (root ignores file modes: a bind mount it is)."""
    if os.geteuid() != 0:
        if os.environ.get("CI"):
            pytest.fail("a read-only bind mount needs root", pytrace=False)
        pytest.skip("a read-only bind mount needs root")
    from app.workbench import Workbench

    source, mounted = tmp_path / "source", tmp_path / "mounted"
    source.mkdir()
    mounted.mkdir()
    bench = Workbench(home=tmp_path / "home", db_url=f"sqlite:///{source / 'store.sqlite3'}",
                      ssh_config_path=tmp_path / "no_ssh_config", user_known_hosts=tmp_path / "no_known_hosts")
    bench.add_host(HostSpec("db-old", address="192.0.2.10"))
    bench.close()
    subprocess.run(["mount", "--bind", "-o", "ro", str(source), str(mounted)], check=True, capture_output=True)
    try:
        yield mounted / "store.sqlite3"
    finally:
        subprocess.run(["umount", str(mounted)], check=True, capture_output=True)


def test_window_on_a_read_only_store_says_nothing_is_saved(qtbot, tmp_path: Path, read_only_store: Path) -> None:
    from app.gui.main_window import MainWindow
    from app.workbench import Workbench

    bench = Workbench(home=tmp_path / "home", db_url=f"sqlite:///{read_only_store}",
                      ssh_config_path=tmp_path / "no_ssh_config", user_known_hosts=tmp_path / "no_known_hosts")
    window = MainWindow(bench)
    qtbot.addWidget(window)
    window.show()
    try:
        qtbot.waitUntil(lambda: "db-old" in window.host_list.host_names(), timeout=10_000)   # it reads
        notice = window.read_only_notice
        assert notice.isVisible()
        assert notice.text().startswith("Read-only store: nothing is saved (")
        assert str(read_only_store) in notice.toolTip()
    finally:
        window.close()
        bench.close()
