"""A host's facts (the agent's JSON) grouped the way a person reads a spec sheet."""
from __future__ import annotations

from datetime import datetime
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFormLayout,
    QFrame,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from widgets.format import NOT_AVAILABLE, disk_size, human_bytes, human_mhz, local_time, plural, time_ago

NEEDS_ROOT = "needs root"
DISK_COLUMNS = ("Name", "Model", "Size", "Type", "Scheduler", "Read-ahead")


def _text(value: Any) -> str:
    if value is None or value == "":
        return NOT_AVAILABLE
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def cpu_topology(cpu: dict) -> str:
    parts = []
    for key, word in (("sockets", "socket"), ("cores", "core"), ("threads", "thread")):
        if isinstance(cpu.get(key), int):
            parts.append(plural(cpu[key], word))
    return ", ".join(parts) or NOT_AVAILABLE


CLOCK_WARN_S = 2.0   # as the run start warns (remote.clock_offset.WARN_BEYOND)


def clock_text(offset: float) -> str:
    """The host's clock against this computer's (offset = host minus ours, seconds)."""
    if abs(offset) <= CLOCK_WARN_S:
        return f"{offset:+.3f} s from this computer's"
    size = abs(offset)
    amount = f"{size / 3600:.1f} h" if size >= 3600 else f"{size / 60:.1f} min" if size >= 120 else f"{size:.1f} s"
    return (f"{amount} {'ahead of' if offset > 0 else 'behind'} this computer's: set it right (NTP); "
            "Benchbay stores every time on this computer's clock")


def tool_text(tool: dict | None) -> str:
    """{"present": true, "version": "3.33"} -> "3.33"; absent -> "not installed"."""
    if not tool or not tool.get("present"):
        return "not installed"
    text = tool.get("version") or "installed (version unknown)"
    if tool.get("type"):
        text = f"{tool['type']} {text}"
    return text


class FactsView(QWidget):
    """Shows one facts dict; `value(section, label)` gives the text shown (for tests and copy)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("factsView")
        self._values: dict[tuple[str, str], QLabel] = {}
        self.disks: QTableWidget | None = None

        self.title = QLabel()
        self.title.setObjectName("factsTitle")
        self.title.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.subtitle = QLabel()
        self.subtitle.setObjectName("factsSubtitle")
        self.subtitle.setWordWrap(True)

        self.scroll = QScrollArea()
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.viewport().setAutoFillBackground(False)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(12, 10, 12, 6)
        layout.setSpacing(2)
        layout.addWidget(self.title)
        layout.addWidget(self.subtitle)
        layout.addSpacing(6)
        layout.addWidget(self.scroll, 1)
        self.show_message("", "Select a host.")

    # -- public ----------------------------------------------------------------------------------

    def show_message(self, host: str, message: str) -> None:
        """No facts to show: a title and one explaining line."""
        self._values = {}
        self.disks = None
        self.title.setText(host or "Facts")
        self.subtitle.setText("")
        hint = QLabel(message)
        hint.setObjectName("factsEmpty")
        hint.setWordWrap(True)
        hint.setAlignment(Qt.AlignmentFlag.AlignHCenter | Qt.AlignmentFlag.AlignTop)
        holder = QWidget()
        holder.setObjectName("factsContent")
        box = QVBoxLayout(holder)
        box.addSpacing(40)
        box.addWidget(hint)
        box.addStretch(1)
        self.scroll.setWidget(holder)

    def set_facts(self, host: str, facts: dict, collected_at: datetime | str | None = None) -> None:
        self._values = {}
        when = collected_at or facts.get("collected_at")
        self.title.setText(f"{host} — {facts.get('hostname') or '?'}")
        bits = [f"Collected {local_time(when)} ({time_ago(when)})"]
        if facts.get("agent_version"):
            bits.append(f"agent {facts['agent_version']}")
        bits.append("as root" if facts.get("is_root") else "as a normal user: some facts need root")
        self.subtitle.setText(" · ".join(bits))

        content = QWidget()
        content.setObjectName("factsContent")
        grid = QGridLayout(content)
        grid.setContentsMargins(0, 0, 4, 0)
        grid.setHorizontalSpacing(12)
        grid.setVerticalSpacing(12)
        grid.addWidget(self._system(facts), 0, 0)
        grid.addWidget(self._cpu(facts.get("cpu") or {}), 0, 1)
        grid.addWidget(self._memory(facts.get("memory") or {}), 1, 0)
        grid.addWidget(self._test_dir(facts.get("test_dir")), 1, 1)
        grid.addWidget(self._disks(facts.get("disks") or []), 2, 0, 1, 2)
        grid.addWidget(self._raid(facts.get("raid") or {}), 3, 0)
        grid.addWidget(self._tools(facts.get("tools") or {}), 3, 1)
        row = 4
        if facts.get("errors"):
            grid.addWidget(self._problems(facts["errors"]), row, 0, 1, 2)
            row += 1
        grid.setRowStretch(row, 1)
        grid.setColumnStretch(0, 1)
        grid.setColumnStretch(1, 1)
        self.scroll.setWidget(content)

    def value(self, section: str, label: str) -> str | None:
        widget = self._values.get((section, label))
        return widget.text() if widget is not None else None

    def is_needs_root(self, section: str, label: str) -> bool:
        widget = self._values.get((section, label))
        return bool(widget is not None and widget.property("needsRoot"))

    # -- sections --------------------------------------------------------------------------------

    def _group(self, title: str) -> tuple[QGroupBox, QFormLayout]:
        group = QGroupBox(title)
        form = QFormLayout(group)
        form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        form.setLabelAlignment(Qt.AlignmentFlag.AlignLeft)
        form.setHorizontalSpacing(14)
        form.setVerticalSpacing(5)
        return group, form

    def _row(self, form: QFormLayout, section: str, label: str, value: Any) -> QLabel:
        needs_root = value == NEEDS_ROOT
        shown = QLabel(NEEDS_ROOT if needs_root else _text(value))
        shown.setWordWrap(True)
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        if needs_root:
            shown.setProperty("needsRoot", True)
            shown.setToolTip("Only root can read this. Gather facts as root (or a user with sudo) to see it.")
        caption = QLabel(label)
        caption.setProperty("role", "caption")
        form.addRow(caption, shown)
        self._values[(section, label)] = shown
        return shown

    def _system(self, facts: dict) -> QGroupBox:
        group, form = self._group("System")
        system = facts.get("system") or {}
        self._row(form, "System", "Hostname", facts.get("hostname"))
        self._row(form, "System", "OS", facts.get("os"))
        kernel = facts.get("kernel")
        if kernel and facts.get("arch"):
            kernel = f"{kernel} ({facts['arch']})"
        self._row(form, "System", "Kernel", kernel)
        virt = facts.get("virtualization")
        self._row(form, "System", "Virtualization", "none (bare metal)" if virt == "none" else virt)
        product = " ".join(str(v) for v in (system.get("vendor"), system.get("product")) if v)
        if product:
            self._row(form, "System", "Machine", product)
        if system.get("serial") is not None:
            self._row(form, "System", "Serial", system.get("serial"))
        self._row(form, "System", "Python", facts.get("python"))
        clock = facts.get("clock")
        offset = clock.get("offset_s") if isinstance(clock, dict) else None
        if isinstance(offset, (int, float)) and not isinstance(offset, bool):
            shown = self._row(form, "System", "Time", clock_text(offset))   # "Clock" is the CPU's
            if abs(offset) > CLOCK_WARN_S:
                shown.setStyleSheet("color: #b7791f;")   # the amber of other warnings
        return group

    def _cpu(self, cpu: dict) -> QGroupBox:
        group, form = self._group("CPU")
        self._row(form, "CPU", "Model", cpu.get("model"))
        self._row(form, "CPU", "Topology", cpu_topology(cpu))
        speed = human_mhz(cpu.get("mhz"))
        if cpu.get("max_mhz"):
            speed = f"{speed} now, {human_mhz(cpu['max_mhz'])} max"
        self._row(form, "CPU", "Clock", speed)
        self._row(form, "CPU", "Governor", cpu.get("governor"))
        if cpu.get("flags"):
            self._row(form, "CPU", "Features", " ".join(cpu["flags"]))
        return group

    def _memory(self, memory: dict) -> QGroupBox:
        group, form = self._group("Memory")
        total = memory.get("total_bytes")
        self._row(form, "Memory", "RAM", human_bytes(total))
        if memory.get("available_bytes") is not None:
            self._row(form, "Memory", "Available", human_bytes(memory["available_bytes"]))
        swap = memory.get("swap_total_bytes")
        if swap == 0:
            self._row(form, "Memory", "Swap", "none")
        else:
            free = memory.get("swap_free_bytes")
            text = human_bytes(swap) if free is None else f"{human_bytes(swap)} ({human_bytes(free)} free)"
            self._row(form, "Memory", "Swap", text)
        return group

    def _test_dir(self, test_dir: dict | None) -> QGroupBox:
        group, form = self._group("Test directory")
        if not test_dir:
            form.addRow(QLabel("Not checked."))
            return group
        self._row(form, "Test directory", "Path", test_dir.get("path"))
        fs = test_dir.get("fstype")
        if test_dir.get("device"):
            fs = f"{fs or '?'} on {test_dir['device']}"
        self._row(form, "Test directory", "Filesystem", fs)
        self._row(form, "Test directory", "Mounted at", test_dir.get("mount_point"))
        self._row(form, "Test directory", "Options", test_dir.get("options"))
        free, total = test_dir.get("free_bytes"), test_dir.get("total_bytes")
        self._row(form, "Test directory", "Free",
                  f"{human_bytes(free)} of {human_bytes(total)}" if total else human_bytes(free))
        direct = test_dir.get("o_direct")
        self._row(form, "Test directory", "Direct I/O",
                  NOT_AVAILABLE if direct is None else ("supported" if direct else
                                                        "not supported: disk results will be cached"))
        return group

    def _disks(self, disks: list[dict]) -> QGroupBox:
        group = QGroupBox(f"Disks ({len(disks)})" if disks else "Disks")
        layout = QVBoxLayout(group)
        if not disks:
            layout.addWidget(QLabel("No disks found."))
            return group
        table = QTableWidget(len(disks), len(DISK_COLUMNS))
        table.setObjectName("disksTable")
        table.setHorizontalHeaderLabels(DISK_COLUMNS)
        table.verticalHeader().setVisible(False)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        table.setAlternatingRowColors(True)
        table.setShowGrid(False)
        table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        for row, disk in enumerate(disks):
            name = disk.get("name") or "?"
            if disk.get("dm_name"):
                name = f"{name} ({disk['dm_name']})"
            model = " ".join(str(v) for v in (disk.get("vendor"), disk.get("model")) if v) or NOT_AVAILABLE
            kind = disk.get("kind")
            medium = "HDD" if disk.get("rotational") else "SSD"
            if kind in ("md", "dm"):
                medium = {"md": "software RAID", "dm": "device mapper"}[kind]
            elif kind == "nvme":
                medium = "NVMe SSD"
            ahead = disk.get("read_ahead_kb")
            cells = (name, model, disk_size(disk.get("size_bytes")), medium, _text(disk.get("scheduler")),
                     NOT_AVAILABLE if ahead is None else f"{ahead} KiB")
            for col, text in enumerate(cells):
                item = QTableWidgetItem(text)
                if col == 2:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                if disk.get("serial") not in (None, NEEDS_ROOT):
                    item.setToolTip(f"Serial {disk['serial']}")
                table.setItem(row, col, item)
        header = table.horizontalHeader()
        header.setDefaultAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter)
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        height = header.sizeHint().height() + sum(table.rowHeight(r) for r in range(len(disks))) + 4
        table.setFixedHeight(min(height, 320))
        if height > 320:
            table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        layout.addWidget(table)
        self.disks = table
        return group

    def _raid(self, raid: dict) -> QGroupBox:
        group, form = self._group("RAID")
        arrays = raid.get("arrays") or []
        if arrays:
            for array in arrays:
                devices = ", ".join(array.get("devices") or [])
                text = f"{array.get('level', '?')}, {array.get('state', '?')} {array.get('status') or ''}".strip()
                self._row(form, "RAID", array.get("name") or "md", f"{text} — {devices}" if devices else text)
        else:
            self._row(form, "RAID", "Software RAID", "none" if raid.get("mdstat") is not None
                      else "none (no /proc/mdstat)")
        controllers = raid.get("hardware") or []
        self._row(form, "RAID", "Controllers", "\n".join(controllers) if controllers else "none listed")
        return group

    def _tools(self, tools: dict) -> QGroupBox:
        group, form = self._group("Tools")
        for key, label in (("fio", "fio"), ("mta", "Mail server"), ("postgresql", "PostgreSQL"),
                           ("iostat", "iostat")):
            shown = self._row(form, "Tools", label, tool_text(tools.get(key)))
            tool = tools.get(key) or {}
            if not tool.get("present"):
                shown.setProperty("absent", True)
            elif tool.get("path"):
                shown.setToolTip(tool["path"])
        return group

    def _problems(self, errors: list[str]) -> QGroupBox:
        group = QGroupBox("Not collected")
        layout = QVBoxLayout(group)
        label = QLabel("\n".join(str(e) for e in errors))
        label.setWordWrap(True)
        label.setProperty("needsRoot", True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        layout.addWidget(label)
        return group
