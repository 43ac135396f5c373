"""The run dialog's page for the dns test: resolvers, the query list, passes and order, the stub's behaviour.

The fields are the agent's own parameters (remote/agent/bench_dns.py), with its defaults and limits; a query
list that is a file on this computer is uploaded with the agent when the run starts.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDoubleSpinBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.test_forms_data import TestForm

PASSES = (("cold,warm", "cold, then warm"), ("cold", "cold only"), ("warm", "warm only"))
ORDERS = (("sequential", "one resolver after the other"), ("interleaved", "all resolvers at once"))
MODES = (("replay", "replay, as a stub resolver"), ("max", "maximum throughput (dnsperf where installed)"))
STAMPS = (("read", "when read, as dnsperf does"),
          ("kernel", "kernel receive time (leaves the host's read delay out)"))
FORMATS = (("auto", "tell from the file"), ("dnsperf", "dnsperf: name TYPE"), ("names", "names (type A)"),
           ("bindlog", "BIND query log"), ("squid", "Squid access.log"))


def _combo(name: str, items: tuple[tuple[str, str], ...], current: str) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    for value, label in items:
        combo.addItem(label, value)
    combo.setCurrentIndex(max(0, combo.findData(current)))
    return combo


class DnsForm(QWidget):
    """Resolvers, the query list (built-in, a file here or on the host), passes, order, window, rate, stub."""

    changed = Signal()

    def __init__(self, test: TestForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)

        def default(name: str) -> Any:
            return test.param(name).default

        self.resolvers = QLineEdit(str(default("resolvers")))
        self.resolvers.setObjectName("dnsResolversEdit")
        self.resolvers.setToolTip("ADDRESS[:PORT], comma separated, as the host reaches them; \"system\" = the "
                                  "nameservers of the host's /etc/resolv.conf")
        self.queries = QLineEdit(str(default("queries")))
        self.queries.setObjectName("dnsQueriesEdit")
        self.queries.setToolTip("builtin (a few hundred everyday names), a file on this computer (uploaded with "
                                "the run), or host:/path for a file on the host")
        browse = QPushButton("Browse…")
        browse.setObjectName("dnsBrowseButton")
        browse.clicked.connect(self._browse)
        queries = QHBoxLayout()
        queries.addWidget(self.queries, 1)
        queries.addWidget(browse)
        self.query_format = _combo("dnsFormatCombo", FORMATS, str(default("query_format")))
        self.passes = _combo("dnsPassesCombo", PASSES, str(default("passes")))
        self.order = _combo("dnsOrderCombo", ORDERS, str(default("order")))
        self.mode = _combo("dnsModeCombo", MODES, str(default("mode")))
        window = test.param("in_flight")
        self.in_flight = QSpinBox()
        self.in_flight.setObjectName("dnsInFlightSpin")
        self.in_flight.setRange(int(window.low or 1), int(window.high or 10000))
        self.in_flight.setValue(int(window.default))
        self.rate = QDoubleSpinBox()
        self.rate.setObjectName("dnsRateSpin")
        self.rate.setRange(0.0, float(test.param("rate").high or 1e7))
        self.rate.setDecimals(0)
        self.rate.setSpecialValueText("no limit")
        self.rate.setSuffix(" queries/s")
        self.limit = QSpinBox()
        self.limit.setObjectName("dnsLimitSpin")
        self.limit.setRange(0, int(test.param("limit").high or 10000000))
        self.limit.setSpecialValueText("the whole list")
        self.limit.setGroupSeparatorShown(True)
        self.timeouts = QLineEdit(str(default("timeouts")))
        self.timeouts.setObjectName("dnsTimeoutsEdit")
        self.timeouts.setToolTip("The stub's waits in seconds: \"1,2\" = wait 1 s, send again, wait 2 s, then it "
                                 "is a timeout")
        self.tcp_fallback = QCheckBox("Ask again over TCP when an answer is truncated")
        self.tcp_fallback.setObjectName("dnsTcpCheck")
        self.tcp_fallback.setChecked(bool(default("tcp_fallback")))
        self.stamps = _combo("dnsStampsCombo", STAMPS, str(default("stamps")))
        self.stamps.setToolTip("When an answer counts as arrived. When read: the time a stub library (and dnsperf) "
                               "sees, the host's own delay in reading it included. Kernel receive time (Linux): "
                               "the resolver's and the network's time alone")
        self.duration = QDoubleSpinBox()
        self.duration.setObjectName("dnsDurationSpin")
        self.duration.setRange(float(test.param("duration").low or 1), float(test.param("duration").high or 3600))
        self.duration.setValue(float(default("duration")))
        self.duration.setSuffix(" s per resolver")
        self.duration.setDecimals(0)
        form = QFormLayout(self)
        form.addRow("Resolvers:", self.resolvers)
        form.addRow("Queries:", queries)
        form.addRow("List format:", self.query_format)
        form.addRow("First N queries:", self.limit)
        form.addRow("Passes:", self.passes)
        form.addRow("Order:", self.order)
        form.addRow("In flight:", self.in_flight)
        form.addRow("Rate limit:", self.rate)
        form.addRow("Stub waits (s):", self.timeouts)
        form.addRow("", self.tcp_fallback)
        form.addRow("Answers timed:", self.stamps)
        form.addRow("Mode:", self.mode)
        form.addRow("Max mode runs:", self.duration)
        note = QLabel("The names go only to the resolvers named here. The slowest names and the timeouts are "
                      "listed per resolver.")
        note.setWordWrap(True)
        note.setStyleSheet(f"color: {MUTED};")
        form.addRow("", note)
        for edit in (self.resolvers, self.queries, self.timeouts):
            edit.textChanged.connect(lambda _t: self.changed.emit())
        for combo in (self.query_format, self.passes, self.order, self.mode, self.stamps):
            combo.currentIndexChanged.connect(lambda _i: self._mode_changed())
        for spin in (self.in_flight, self.limit, self.rate, self.duration):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        self.tcp_fallback.toggled.connect(lambda _c: self.changed.emit())
        self._mode_changed()

    def _browse(self) -> None:
        path, _filter = QFileDialog.getOpenFileName(self, "Query list", "", "Query lists and logs (*)")
        if path:
            self.queries.setText(path)

    def _mode_changed(self) -> None:
        replay = self.mode.currentData() == "replay"
        for widget in (self.passes, self.order, self.timeouts, self.tcp_fallback, self.stamps):
            widget.setEnabled(replay)
        self.duration.setEnabled(not replay)
        self.changed.emit()

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"resolvers": self.resolvers.text().strip(), "queries": self.queries.text().strip(),
                                  "query_format": self.query_format.currentData(), "mode": self.mode.currentData(),
                                  "in_flight": self.in_flight.value(), "rate": self.rate.value(),
                                  "limit": self.limit.value(), "timeouts": self.timeouts.text().strip()}
        if params["mode"] == "max":
            params["duration"] = self.duration.value()
        else:
            params.update(passes=self.passes.currentData(), order=self.order.currentData(),
                          tcp_fallback=self.tcp_fallback.isChecked(), stamps=self.stamps.currentData())
        return params
