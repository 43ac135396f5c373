"""The network filesystems table: nfsiostat's figures per NFS mount, updated in place, and a FUSE or
other network filesystem named with why it has no figures (no zeros)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from widgets.nfs_table import NO_COUNTERS_FUSE, NOTHING, NetworkFsTable

PROJECTS = {"ops_s": 1550.5, "read_kB_s": 2146.484375, "write_kB_s": 4363.28125, "read_kB_op": 4.29,
            "write_kB_op": 4.36, "read_rtt_ms": 0.8, "write_rtt_ms": 4.5, "read_exe_ms": 0.9, "write_exe_ms": 4.9,
            "read_retrans": 0.0, "write_retrans": 1.0, "read_errors": 0.0, "write_errors": 2.0}


@dataclass
class Point:
    nfs: dict = field(default_factory=dict)
    netfs: dict = field(default_factory=dict)


def row_texts(table: NetworkFsTable, row: int) -> list[str]:
    return [table.item(row, c).text() if table.item(row, c) else "" for c in range(table.columnCount())]


def test_nfs_rows_first_with_figures_and_a_fuse_share_explained(qtbot) -> None:
    table = NetworkFsTable()
    qtbot.addWidget(table)
    assert table.item(0, 0).text() == NOTHING
    point = Point(nfs={"/srv/projects": PROJECTS},
                  netfs={"/srv/projects": "nfs4", "/mnt/vault": "fuse.sshfs"})
    table.show_point(point)
    assert table.mounts() == ["/srv/projects", "/mnt/vault"]
    assert row_texts(table, 0) == ["/srv/projects", "nfs4", "1550.5", "2146.5", "4363.3", "4.3", "4.4", "0.80",
                                   "4.50", "0.90", "4.90", "1 (2 err)"]
    vault = row_texts(table, 1)
    assert vault[:3] == ["/mnt/vault", "fuse.sshfs", NO_COUNTERS_FUSE] and not any(vault[3:])
    assert table.columnSpan(1, 2) == table.columnCount() - 2        # one cell says why, none shows 0

    first_item = table.item(0, 2)
    table.show_point(Point(nfs={"/srv/projects": dict(PROJECTS, ops_s=7.0)}, netfs=point.netfs))
    assert table.item(0, 2) is first_item and first_item.text() == "7.0"   # updated in place, not rebuilt

    table.show_point(Point())                                         # unmounted: back to the note
    assert table.rowCount() == 1 and table.item(0, 0).text() == NOTHING and table.mounts() == []


def test_a_host_panel_shows_its_network_filesystems_only_while_one_is_mounted(qtbot) -> None:
    from tests.unit.test_nfs_telemetry import mountstats, through_sampler
    from widgets.dashboard import Dashboard
    from widgets.nfs_table import NO_COUNTERS_OTHER

    board = Dashboard()
    qtbot.addWidget(board)
    board.resize(1200, 800)
    board.show()
    qtbot.waitExposed(board)
    recorded = through_sampler(mountstats("nfs4_t0"), mountstats("nfs4_t1"), 5.0)   # a real NFSv4 client's
    plain = replace(recorded, nfs={}, netfs={})
    board.add_sample("nfs-client", plain)
    panel = board.panels["nfs-client"]
    assert panel.nfs_table.isHidden()                                   # no network filesystem: no table
    board.add_sample("nfs-client", replace(recorded, t=recorded.t + 5))
    table = panel.nfs_table
    qtbot.waitUntil(lambda: table.isVisible())
    assert table.mounts() == ["/srv/builds", "/srv/projects", "/mnt/public", "/mnt/vault"]
    projects = row_texts(table, 1)
    assert projects[:5] == ["/srv/projects", "nfs4", "620.2", "858.6", "1745.3"]
    assert row_texts(table, 2)[2] == NO_COUNTERS_OTHER and row_texts(table, 3)[2] == NO_COUNTERS_FUSE
    # every row readable: the table is as tall as its rows, the graphs below keep the rest
    bottom = table.visualRect(table.model().index(3, 0)).bottom()
    assert 0 < bottom < table.viewport().height()
    assert panel.plots["util"].geometry().top() > table.geometry().bottom()
    board.add_sample("nfs-client", replace(plain, t=recorded.t + 10))   # unmounted again
    assert table.isHidden() and table.mounts() == []


def test_a_panel_built_late_shows_the_mounts_of_the_newest_interval(qtbot) -> None:
    from tests.unit.test_nfs_telemetry import mountstats, through_sampler
    from widgets.dashboard import PANEL_MIN_HEIGHT, Dashboard

    board = Dashboard()
    qtbot.addWidget(board)
    recorded = through_sampler(mountstats("nfs3_t0"), mountstats("nfs3_t1"), 5.0)
    for i in range(4):                                       # more hosts than are built with the host
        board.add_sample(f"client{i}", recorded)
    assert "client3" not in board.panels.built
    table = board.panels["client3"].nfs_table
    assert table.mounts() == ["/mnt/home", "/mnt/scratch space"]
    # the table comes on top of the graphs' room in the scrolling grid, not out of it
    assert board.slots["client3"].minimumHeight() == PANEL_MIN_HEIGHT + table.height() > PANEL_MIN_HEIGHT
