"""The run dialog: which hosts, which test, its preset and parameters; then each host's progress.

The application hands it the tests (presets, jobs, defaults and limits, as the agent defines them) and
a validate callable (the agent's own check). The form builds one RunChoice (choice()); Start is enabled
only while the form is valid: the form's own checks first, then validate, so a bad value is named before
anything connects. A test has a preset exactly when the agent takes one.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from PySide6.QtCore import QSize, Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QListWidget,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QStackedWidget,
    QVBoxLayout,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.field_row import field_row
from widgets.format import one_line
from widgets.repeat_field import RepeatField
from widgets.run_dbload_form import DbLoadForm
from widgets.run_disk_form import DiskForm, high, parse_size, seconds_spin  # noqa: F401 - parse_size: the dialog's too
from widgets.run_dns_form import DnsForm
from widgets.run_hosts import host_item
from widgets.run_progress import RunProgress
from widgets.run_service_forms import MailStormForm, RestoreForm
from widgets.screen_fit import fit_to_screen
from widgets.test_forms_data import PresetView, RunChoice, TestForm

PROGRESS_ROOM = 150    # px kept below the form for the progress rows, so Start does not grow the dialog
PROGRESS_WIDTH = 1000  # a progress row's fixed columns and its button
PAGES = ("disk", "cpu", "idle", "mailstorm", "restore", "dns")   # the tests this dialog has a form for
OPTIONAL_PAGES = ("dbload",)   # forms for tests an older agent may not have: offered when the agent has them


class RunDialog(QDialog):
    """Pick hosts, test, preset and parameters; Start emits the choice and shows the progress.

    tests: one for each form the dialog has (PAGES), in the order the test combo lists them.
    """

    start_requested = Signal(object)   # RunChoice

    def __init__(self, hosts: list[str], selected: list[str], busy: set[str] | None = None,
                 parent: QWidget | None = None, *, tests: Sequence[TestForm],
                 validate: Callable[[str, Mapping[str, Any]], object], monitored: set[str] | None = None) -> None:
        """busy: hosts running a test (they cannot be chosen); monitored: hosts whose monitor the test takes over."""
        super().__init__(parent)
        self.tests = {test.name: test for test in tests if test.name in PAGES + OPTIONAL_PAGES}
        missing = sorted(set(PAGES) - set(self.tests))
        if missing:
            raise ValueError(f"the run dialog needs the {', '.join(missing)} test(s)")
        self._agent_validate = validate
        self.setObjectName("runDialog")
        self.setWindowTitle("Run test")
        self.host_list = QListWidget()
        self.host_list.setObjectName("runHosts")
        self.host_list.setMaximumHeight(110)
        for host in hosts:
            self.host_list.addItem(host_item(host, host in selected, busy or set(), monitored or set()))
        self.test_combo = QComboBox()
        self.test_combo.setObjectName("testCombo")
        for test in self.tests.values():
            self.test_combo.addItem(test.menu_label, test.name)
        self.preset_combo = QComboBox()
        self.preset_combo.setObjectName("presetCombo")
        with_presets = [test for test in self.tests.values() if test.presets]
        for name in dict.fromkeys(p.name for test in with_presets for p in test.presets):
            self.preset_combo.addItem(name, name)
        if with_presets:
            self.preset_combo.setToolTip("; ".join(f"{p.name}: {p.summary}" for p in with_presets[0].presets))

        # -- disk parameters (widgets.run_disk_form); the dialog's names for its fields stay
        self.disk_form = disk = DiskForm(self.tests["disk"])
        self.test_dir, self.file_size, self.runtime, self.warmup = (disk.test_dir, disk.file_size, disk.runtime,
                                                                    disk.warmup)
        self.direct, self.engine, self.sync_mode, self.job_boxes = (disk.direct, disk.engine, disk.sync_mode,
                                                                    disk.job_boxes)

        # -- cpu parameters
        cpu_test = self.tests["cpu"]
        self.cpu_seconds = seconds_spin(5.0, 0.5, high(cpu_test, "seconds", 3600.0), "cpuSecondsSpin")
        self.cpu_seconds.setToolTip("Seconds of work per phase (single core, then all cores)")
        self.cpu_workers = QSpinBox()
        self.cpu_workers.setObjectName("cpuWorkersSpin")
        self.cpu_workers.setRange(0, int(high(cpu_test, "workers", 1024)))
        self.cpu_workers.setSpecialValueText("all cores")
        cpu = QWidget()
        cpu_form = QFormLayout(cpu)
        cpu_form.addRow("Seconds per phase:", self.cpu_seconds)
        cpu_form.addRow("Workers (multi-core):", self.cpu_workers)

        # -- idle parameters
        # the agent's default phases: [id, label, seconds] for the warm-up, then the measure
        self.idle_phases = [list(phase) for phase in self.tests["idle"].param("phases").default]
        self.idle_warmup = seconds_spin(float(self.idle_phases[0][2]), 0.0, 3600.0, "idleWarmupSpin")
        self.idle_measure = seconds_spin(float(self.idle_phases[-1][2]), 0.1, 3600.0, "idleMeasureSpin")
        idle = QWidget()
        idle_form = QFormLayout(idle)
        idle_form.addRow("Warm-up phase:", self.idle_warmup)
        idle_form.addRow("Measure phase:", self.idle_measure)
        idle_form.addRow("", QLabel("Only waits: shows how a run, its phases and its progress look."))

        self.mail_form = MailStormForm(self.tests["mailstorm"])
        self.restore_form = RestoreForm(self.tests["restore"])
        self.dbload_form = DbLoadForm(self.tests["dbload"]) if "dbload" in self.tests else None
        self.dns_form = DnsForm(self.tests["dns"])
        for page_form in (self.mail_form, self.restore_form, self.dbload_form, self.dns_form):
            if page_form is not None:
                page_form.changed.connect(self.validate)

        pages: dict[str, QWidget] = {"disk": disk, "cpu": cpu, "idle": idle, "mailstorm": self.mail_form,
                                     "restore": self.restore_form, "dns": self.dns_form}
        if self.dbload_form is not None:
            pages["dbload"] = self.dbload_form
        self.params_stack = QStackedWidget()
        for name in self.tests:   # in the order of the test combo
            self.params_stack.addWidget(pages[name])
        self.params_box = QGroupBox("Parameters")
        box_layout = QVBoxLayout(self.params_box)
        box_layout.addWidget(self.params_stack)

        self.error_label = QLabel("")
        self.error_label.setObjectName("runErrorLabel")
        self.error_label.setStyleSheet("color: #c0392b;")
        self.error_label.setWordWrap(True)
        self.progress = RunProgress()
        self.progress.hide()
        self.start_button = QPushButton("Start")
        self.start_button.setObjectName("startButton")
        self.start_button.setDefault(True)
        self.close_button = QPushButton("Close")
        self.close_button.setObjectName("closeButton")
        self.close_button.setToolTip("Close this dialog; running tests go on (the Live tab shows them)")
        buttons = QHBoxLayout()
        hint = QLabel("Telemetry and phase markers appear in the Live tab; the results open when the test ends.")
        hint.setObjectName("runHint")
        hint.setWordWrap(True)   # the buttons keep their room in a narrow dialog
        hint.setStyleSheet(f"color: {MUTED};")
        buttons.addWidget(hint, 1)
        buttons.addWidget(self.start_button)
        buttons.addWidget(self.close_button)

        top = QFormLayout()
        top.addRow("Hosts:", self.host_list)
        top.addRow("Test:", field_row(("", self.test_combo), ("Preset:", self.preset_combo)))
        self.repeat = RepeatField()
        top.addRow("Repeat:", self.repeat)
        self.form = QWidget()
        form_layout = QVBoxLayout(self.form)
        form_layout.setContentsMargins(0, 0, 0, 0)
        form_layout.addLayout(top)
        form_layout.addWidget(self.params_box)
        # the form and the progress scroll together: Start shows the progress without growing the dialog,
        # so Close stays under the pointer; on a small screen the form scrolls instead of being cut
        body = QWidget()
        body.setObjectName("runDialogBody")
        body_layout = QVBoxLayout(body)
        body_layout.setContentsMargins(0, 0, 0, 0)
        body_layout.addWidget(self.form)
        body_layout.addWidget(self.error_label)
        body_layout.addWidget(self.progress)
        body_layout.addStretch(1)
        self.body = QScrollArea()
        self.body.setObjectName("runDialogScroll")
        self.body.setFrameShape(QFrame.Shape.NoFrame)
        self.body.setWidgetResizable(True)
        self.body.setWidget(body)
        layout = QVBoxLayout(self)
        layout.addWidget(self.body, 1)
        layout.addLayout(buttons)

        self.test_combo.currentIndexChanged.connect(lambda _i: self._test_changed())
        self.preset_combo.currentIndexChanged.connect(lambda _i: self._apply_preset())
        self.host_list.itemChanged.connect(lambda _item: self.validate())
        self.disk_form.changed.connect(self.validate)
        for spin in (self.cpu_seconds, self.cpu_workers, self.idle_warmup, self.idle_measure):
            spin.valueChanged.connect(lambda _v: self.validate())
        self.start_button.clicked.connect(lambda _checked=False: self.start())
        self.close_button.clicked.connect(lambda _checked=False: self.close())
        self._test_changed()
        # room for the form and a few progress rows from the start, then never resized by Start
        inner = body.sizeHint()
        wanted = QSize(max(inner.width(), PROGRESS_WIDTH) + 40, inner.height() + PROGRESS_ROOM
                       + buttons.sizeHint().height() + 40)
        self.wanted_size = wanted
        fit_to_screen(self, wanted)

    # -- the form --------------------------------------------------------------------------------

    def test(self) -> str:
        return str(self.test_combo.currentData())

    def set_test(self, test: str) -> None:
        self.test_combo.setCurrentIndex(self.test_combo.findData(test))

    def hosts(self) -> list[str]:
        items = (self.host_list.item(i) for i in range(self.host_list.count()))
        return [item.data(Qt.ItemDataRole.UserRole) for item in items
                if item.checkState() == Qt.CheckState.Checked and item.flags() & Qt.ItemFlag.ItemIsEnabled]

    def _test_changed(self) -> None:
        self.params_stack.setCurrentIndex(self.test_combo.currentIndex())
        self.preset_combo.setEnabled(bool(self.tests[self.test()].presets))
        self._apply_preset()

    def _preset(self) -> PresetView | None:
        """The chosen preset, when the test has it (a test without presets takes none)."""
        name = str(self.preset_combo.currentData())
        return next((preset for preset in self.tests[self.test()].presets if preset.name == name), None)

    def _apply_preset(self) -> None:
        """Fill the test's form with the preset's values; the user changes what he wants afterwards."""
        preset = self._preset()
        if preset is not None and self.test() == "disk":
            self.disk_form.apply_preset(preset)
        elif preset is not None and self.test() == "cpu":
            self.cpu_seconds.setValue(preset.values["seconds"])
        self.validate()

    def params(self) -> dict[str, Any]:
        """The test's parameters as the agent takes them; ValueError naming what is wrong."""
        test, chosen = self.test(), self._preset()
        preset = chosen.name if chosen is not None else ""
        if test == "mailstorm":
            return self.mail_form.params()
        if test == "restore":
            return self.restore_form.params()
        if test == "dbload" and self.dbload_form is not None:
            return self.dbload_form.params()
        if test == "dns":
            return self.dns_form.params()
        if test == "idle":
            (warmup_id, warmup_label, _), (measure_id, measure_label, _) = self.idle_phases[0], self.idle_phases[-1]
            return {"phases": [[warmup_id, warmup_label, self.idle_warmup.value()],
                               [measure_id, measure_label, self.idle_measure.value()]]}
        if test == "cpu":
            params: dict[str, Any] = {"preset": preset, "seconds": self.cpu_seconds.value()}
            if self.cpu_workers.value():
                params["workers"] = self.cpu_workers.value()
            return params
        return self.disk_form.params(preset)

    def choice(self) -> RunChoice:
        """The test, its parameters and the hosts to run it on; ValueError when the form is not valid."""
        return RunChoice(self.test(), self.params(), self.hosts(), self.repeat.count(), self.repeat.until_stable())

    def validate(self) -> bool:
        """Show the first problem and enable Start only when there is none."""
        problem = ""
        if self.dbload_form is not None:
            items = [self.host_list.item(i) for i in range(self.host_list.count())]
            self.dbload_form.set_client_hosts(len(self.hosts()), [i.data(Qt.ItemDataRole.UserRole) for i in items])
        try:
            self._agent_validate(self.test(), self.params())   # the agent checks them the same way
            if not self.hosts():
                problem = "choose at least one host"
            elif self.test() == "dbload" and len(self.hosts()) > 1 and (self.repeat.count() > 1
                                                                        or self.repeat.until_stable()):
                problem = "several client hosts load one server together: no repeats (the sweep repeats the load)"
        except ValueError as exc:
            problem = one_line(str(exc))
        self.error_label.setText(problem)
        self.error_label.setVisible(bool(problem))
        running = bool(self.progress.running())
        self.start_button.setEnabled(not problem and not running)
        return not problem

    # -- running ---------------------------------------------------------------------------------

    def start(self) -> RunChoice | None:
        if not self.validate():
            return None
        choice = self.choice()
        self.progress.clear()
        self.progress.show()
        # once laid out: the rows scroll into view, the dialog keeps its size
        QTimer.singleShot(0, lambda: self.body.ensureWidgetVisible(self.progress))
        self.form.setEnabled(False)
        self.start_button.setEnabled(False)
        self.start_requested.emit(choice)
        return choice

    def set_running(self, running: bool) -> None:
        """While tests run the form is locked; afterwards it may start another test."""
        if running:
            return
        self.form.setEnabled(True)
        if self.progress.rows:
            self.start_button.setText("Start again")
        self.validate()
