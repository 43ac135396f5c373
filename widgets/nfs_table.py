"""A host's network filesystems, live: what `nfsiostat` prints for each NFS mount, one row per mount,
and every other network filesystem (sshfs and other FUSE ones, cifs) named with why it has no figures.

Fed one telemetry interval at a time with show_point(); it reads only the two mappings NfsPoint names.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem, QWidget


class NfsPoint(Protocol):
    @property
    def nfs(self) -> Mapping[str, Mapping[str, float]]: ...   # mount point -> nfsiostat figures
    @property
    def netfs(self) -> Mapping[str, str]: ...                 # mount point -> filesystem type


# header, figure key (None: computed), decimals, tooltip
COLUMNS = (
    ("Mount", None, 0, "Mount point"),
    ("Type", None, 0, "Filesystem type"),
    ("ops/s", "ops_s", 1, "RPC requests sent per second, every operation (nfsiostat ops/s)"),
    ("Read kB/s", "read_kB_s", 1, "kB read per second, RPC headers included (nfsiostat read kB/s)"),
    ("Write kB/s", "write_kB_s", 1, "kB written per second, RPC headers included (nfsiostat write kB/s)"),
    ("Read kB/op", "read_kB_op", 1, "kB per READ operation"),
    ("Write kB/op", "write_kB_op", 1, "kB per WRITE operation"),
    ("Read RTT ms", "read_rtt_ms", 2, "ms from sending a READ to its reply (network and server), per operation"),
    ("Write RTT ms", "write_rtt_ms", 2, "ms from sending a WRITE to its reply (network and server), per operation"),
    ("Read exe ms", "read_exe_ms", 2, "ms a READ took in all, queueing in the client included, per operation"),
    ("Write exe ms", "write_exe_ms", 2, "ms a WRITE took in all, queueing in the client included, per operation"),
    ("Retrans", None, 0, "READ and WRITE requests sent again in the interval (the network or server lost them)"),
)
FIRST_FIGURE = 2
NO_COUNTERS_FUSE = "FUSE network filesystem: the kernel keeps no NFS or block-device counters for it"
NO_COUNTERS_OTHER = "network filesystem: only NFS mounts have per-mount counters"
NOTHING = "No network filesystem mounted"


def no_counters_text(fstype: str) -> str:
    return NO_COUNTERS_FUSE if fstype == "fuse" or fstype.startswith("fuse.") else NO_COUNTERS_OTHER


def cell_texts(figures: Mapping[str, float]) -> list[str]:
    """The figure columns of an NFS mount's row."""
    texts = []
    for _, key, decimals, _ in COLUMNS[FIRST_FIGURE:]:
        if key is None:   # retransmissions: reads and writes together, a count
            value = figures.get("read_retrans", 0.0) + figures.get("write_retrans", 0.0)
            errors = figures.get("read_errors", 0.0) + figures.get("write_errors", 0.0)
            texts.append(f"{value:.0f}" + (f" ({errors:.0f} err)" if errors else ""))
        else:
            texts.append(f"{figures.get(key, 0.0):.{decimals}f}")
    return texts


class NetworkFsTable(QTableWidget):
    """One row per network filesystem of the host; NFS rows updated in place at every interval."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self.setObjectName("networkFsTable")
        self.setHorizontalHeaderLabels([c[0] for c in COLUMNS])
        for column, (_, _, _, tip) in enumerate(COLUMNS):
            self.horizontalHeaderItem(column).setToolTip(tip)
        self.verticalHeader().setVisible(False)
        self.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        header = self.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self._rows: list[tuple[str, str, bool]] | None = None   # (mount, fstype, has figures) as shown
        self.show_point(None)

    def mounts(self) -> list[str]:
        return [mount for mount, _, _ in self._rows or []]

    def show_point(self, point: NfsPoint | None) -> None:
        nfs = dict(point.nfs) if point is not None else {}
        netfs = dict(point.netfs) if point is not None else {}
        for mount in nfs:
            netfs.setdefault(mount, "nfs")
        # NFS mounts first, then the others, each by mount point
        rows = sorted(((m, t, m in nfs) for m, t in netfs.items()), key=lambda r: (not r[2], r[0]))
        if rows != self._rows:
            self._rebuild(rows)
        for row, (mount, _, has_figures) in enumerate(rows):
            if has_figures:
                for column, text in enumerate(cell_texts(nfs[mount]), start=FIRST_FIGURE):
                    self.item(row, column).setText(text)

    def _rebuild(self, rows: list[tuple[str, str, bool]]) -> None:
        self._rows = rows
        self.clearSpans()
        self.setRowCount(max(len(rows), 1))
        if not rows:
            self._note(0, 0, NOTHING)
            self.setSpan(0, 0, 1, len(COLUMNS))
            return
        for row, (mount, fstype, has_figures) in enumerate(rows):
            self._plain(row, 0, mount, Qt.AlignmentFlag.AlignLeft)
            self._plain(row, 1, fstype, Qt.AlignmentFlag.AlignLeft)
            if has_figures:
                for column in range(FIRST_FIGURE, len(COLUMNS)):
                    self._plain(row, column, "", Qt.AlignmentFlag.AlignRight)
            else:   # no zeros for figures that do not exist: one cell that says why
                self._note(row, FIRST_FIGURE, no_counters_text(fstype))
                self.setSpan(row, FIRST_FIGURE, 1, len(COLUMNS) - FIRST_FIGURE)

    def _plain(self, row: int, column: int, text: str, align: Qt.AlignmentFlag) -> None:
        item = QTableWidgetItem(text)
        item.setTextAlignment(align | Qt.AlignmentFlag.AlignVCenter)
        item.setToolTip(text)
        self.setItem(row, column, item)

    def _note(self, row: int, column: int, text: str) -> None:
        item = QTableWidgetItem(text)
        font = QFont(self.font())
        font.setItalic(True)
        item.setFont(font)
        item.setForeground(self.palette().placeholderText())
        item.setToolTip(text)
        self.setItem(row, column, item)
