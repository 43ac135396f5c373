"""The run dialog's page for the disk test: the test directory, file size, times, engine, sync mode and jobs.

The job list and the presets come from the test handed in, as the agent defines them."""
from __future__ import annotations

import re
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QLineEdit,
    QWidget,
)

from widgets.field_row import field_row
from widgets.test_forms_data import PresetView, TestForm

_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20, "mib": 1 << 20,
          "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40, "tib": 1 << 40}


def parse_size(text: str) -> int:
    """ "256M", "2 GiB", "1.5g", "4096" -> bytes (binary units); ValueError when it is not a size."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not match or match.group(2).lower() not in _UNITS:
        raise ValueError(f"file size {text.strip()!r} is not a size (e.g. 256M, 2G)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


def format_size(size: int) -> str:
    for unit, factor in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor}{unit}"
    return str(size)

def high(test: TestForm, name: str, fallback: float) -> float:
    """The agent's upper limit of a parameter, or the form's own when the agent sets none."""
    high = test.param(name).high
    return fallback if high is None else float(high)


def seconds_spin(value: float, low: float, high: float, name: str) -> QDoubleSpinBox:
    spin = QDoubleSpinBox()
    spin.setObjectName(name)
    spin.setRange(low, high)
    spin.setDecimals(1)
    spin.setSuffix(" s")
    spin.setValue(value)
    return spin


class DiskForm(QWidget):
    changed = Signal()

    def __init__(self, test: TestForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.test = test
        self.test_dir = QLineEdit()
        self.test_dir.setObjectName("testDirEdit")
        self.test_dir.setPlaceholderText("the host's test directory, else its run directory")
        self.test_dir.setToolTip("An absolute directory on the host's disk to test; the test file is "
                                 "created there and removed afterwards. Empty: the test directory set for "
                                 "the host (Edit host), else the run directory")
        self.file_size = QLineEdit()
        self.file_size.setObjectName("fileSizeEdit")
        self.file_size.setToolTip("Size of the test file, e.g. 256M or 2G; larger than the host's RAM "
                                  "when direct I/O is off")
        self.runtime = seconds_spin(5.0, 0.1, 3600.0, "runtimeSpin")
        self.runtime.setToolTip("Measured seconds per job")
        self.warmup = seconds_spin(1.0, 0.0, 600.0, "warmupSpin")
        self.warmup.setToolTip("Seconds per job before measuring; excluded from the figures")
        self.direct = QCheckBox("Direct I/O (O_DIRECT: bypass the page cache)")
        self.direct.setObjectName("directCheck")
        self.direct.setChecked(True)
        self.engine = QComboBox()
        self.engine.setObjectName("engineCombo")
        for text, key in (("auto (fio when installed)", "auto"), ("fio", "fio"), ("built-in", "builtin")):
            self.engine.addItem(text, key)
        self.sync_mode = QComboBox()
        self.sync_mode.setObjectName("syncCombo")
        self.sync_mode.addItem("fdatasync after each write", "fdatasync")
        self.sync_mode.addItem("O_SYNC (open flag)", "osync")
        self.job_boxes: dict[str, QCheckBox] = {}
        jobs = QGridLayout()
        jobs.setContentsMargins(0, 0, 0, 0)
        disk_test = test
        first_preset = disk_test.presets[0].name if disk_test.presets else ""
        for index, job in enumerate(disk_test.jobs):
            box = QCheckBox(job.label)
            box.setObjectName(f"job_{job.key}")
            box.setChecked(first_preset in job.presets)
            if job.help:
                box.setToolTip(job.help)
            self.job_boxes[job.key] = box
            jobs.addWidget(box, index // 4, index % 4)
        disk_form = QFormLayout(self)
        disk_form.addRow("Test directory:", self.test_dir)
        disk_form.addRow("File size:", field_row(("", self.file_size), ("Runtime:", self.runtime),
                                                 ("Warm-up:", self.warmup)))
        disk_form.addRow("Engine:", field_row(("", self.engine), ("Sync writes:", self.sync_mode)))
        disk_form.addRow("", self.direct)
        disk_form.addRow("Jobs:", jobs)
        for edit in (self.test_dir, self.file_size):
            edit.textChanged.connect(lambda _t: self.changed.emit())
        for spin in (self.runtime, self.warmup):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        for widget in (self.direct, *self.job_boxes.values()):
            widget.toggled.connect(lambda _c: self.changed.emit())
        for combo in (self.engine, self.sync_mode):
            combo.currentIndexChanged.connect(lambda _i: self.changed.emit())

    def apply_preset(self, preset: PresetView) -> None:
        """The preset's values; a job the preset does not run cannot be ticked."""
        values = preset.values
        self.file_size.setText(format_size(values["file_size"]))
        self.runtime.setValue(values["runtime"])
        self.warmup.setValue(values["warmup"])
        for job in self.test.jobs:
            box = self.job_boxes[job.key]
            box.setEnabled(preset.name in job.presets)
            if preset.name not in job.presets:
                box.setChecked(False)

    def params(self, preset: str) -> dict[str, Any]:
        """The disk test's parameters as the agent takes them; ValueError naming what is wrong."""
        directory = self.test_dir.text().strip()
        if directory and not directory.startswith("/"):
            raise ValueError(f"the test directory must be an absolute path, not {directory!r}")
        size = parse_size(self.file_size.text())
        if size < 1 << 20:
            raise ValueError("the file size must be at least 1 MiB")
        jobs = [key for key, box in self.job_boxes.items() if box.isChecked() and box.isEnabled()]
        if not jobs:
            raise ValueError("choose at least one job")
        params = {"preset": preset, "file_size": size, "runtime": self.runtime.value(),
                  "warmup": self.warmup.value(), "direct": self.direct.isChecked(),
                  "engine": self.engine.currentData(), "tests": jobs, "sync_mode": self.sync_mode.currentData()}
        if directory:
            params["test_dir"] = directory
        return params
