"""The run dialog's page for the database load test: which server to load, with which tool and workload, how
much data, the clients sweep, and how to log in.

The fields carry the agent's own parameter names; defaults and limits come from the test handed in where the
agent defines them. The password is sent to the agent when the run starts (as the restore test's is): it is
never written to the settings, the store or a command line.
"""
from __future__ import annotations

from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDoubleSpinBox,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QSpinBox,
    QWidget,
)

from widgets.chart_theme import MUTED
from widgets.field_row import field_row
from widgets.test_forms_data import TestForm

ENGINES = (("PostgreSQL", "postgresql", 5432), ("MySQL / MariaDB", "mysql", 3306), ("Redis", "redis", 6379))
TOOLS = {"postgresql": (("auto (pgbench)", "auto"), ("pgbench", "pgbench")),
         "mysql": (("auto (sysbench)", "auto"), ("sysbench", "sysbench")),
         "redis": (("auto (redis-benchmark, else built-in)", "auto"), ("redis-benchmark", "redis-benchmark"),
                   ("memtier_benchmark", "memtier"), ("built-in (no tool needed)", "builtin"))}
WORKLOADS = {"postgresql": (("TPC-B like (pgbench default)", "tpcb-like"), ("select only", "select-only"),
                            ("simple update", "simple-update"), ("my own script file…", "script")),
             "mysql": (("OLTP read/write", "oltp_read_write"), ("OLTP point select", "oltp_point_select"),
                       ("OLTP write only", "oltp_write_only")),
             "redis": (("GET/SET mix", "getset"),)}
DATA = (("fits in the target's memory", "fits"), ("twice the target's memory", "2xram"), ("a scale I set", "scale"))
DEFAULT_CLIENTS = "1,2,4,8,16"


def _default(test: TestForm, name: str, fallback: Any) -> Any:
    """The agent's default of a parameter, or the contract's when this agent does not say."""
    try:
        value = test.param(name).default
    except (KeyError, AttributeError):
        return fallback
    return fallback if value is None else value


def _limits(test: TestForm, name: str, low: float, high: float) -> tuple[float, float]:
    try:
        param = test.param(name)
    except (KeyError, AttributeError):
        return low, high
    return (low if param.low is None else float(param.low)), (high if param.high is None else float(param.high))


def _combo(name: str, items: tuple[tuple[str, str], ...]) -> QComboBox:
    combo = QComboBox()
    combo.setObjectName(name)
    for text, key in items:
        combo.addItem(text, key)
    return combo


def _note(text: str) -> QLabel:
    label = QLabel(text)
    label.setWordWrap(True)
    label.setStyleSheet(f"color: {MUTED};")
    return label


class DbLoadForm(QWidget):
    changed = Signal()

    def __init__(self, test: TestForm, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.engine = _combo("dbloadEngineCombo", tuple((text, key) for text, key, _port in ENGINES))
        self.engine.setToolTip("The database server to load")
        self.target = QLineEdit(str(_default(test, "target", "") or ""))
        self.target.setObjectName("dbloadTargetEdit")
        self.target.setToolTip("The server's address and port as the client host reaches it (ADDR:PORT); "
                               "without a port, the engine's usual one")
        self.server_host = QLineEdit()
        self.server_host.setObjectName("dbloadServerHostEdit")
        self.server_host.setPlaceholderText("found from the target's address; or a host's name")
        self.server_host.setToolTip("The host of Benchbay's list that runs the database server: its own CPU, disks, "
                                    "load and steal are recorded with the run while the clients load it")
        self.tool = QComboBox()
        self.tool.setObjectName("dbloadToolCombo")
        self.tool.setToolTip("The load tool, run on the client host; auto takes the vendor's tool when the host "
                             "has it (a missing tool is named with what to install)")
        self.workload = QComboBox()
        self.workload.setObjectName("dbloadWorkloadCombo")
        self.script = QLineEdit()
        self.script.setObjectName("dbloadScriptEdit")
        self.script.setPlaceholderText("/absolute/path/on/the/client/host.sql")
        self.script.setToolTip("A pgbench script file on the client host")
        self.data = _combo("dbloadDataCombo", DATA)
        self.data.setToolTip("How much data the test loads first: chosen from the target's RAM, or a scale "
                             "(pgbench scale factor, sysbench table size, Redis key space)")
        self.scale = QSpinBox()
        self.scale.setObjectName("dbloadScaleSpin")
        self.scale.setRange(1, 1_000_000_000)
        self.scale.setGroupSeparatorShown(True)
        self.scale.setValue(10)
        self.clients = QLineEdit(str(_default(test, "clients", DEFAULT_CLIENTS)).strip("[]").replace(" ", ""))
        self.clients.setObjectName("dbloadClientsEdit")
        self.clients.setToolTip("Client counts, one step each (\"1,2,4,8\": a sweep); the knee is the first step "
                                "whose throughput is under 1.1x the best before it")
        low, high = _limits(test, "step_seconds", 1.0, 3600.0)
        self.step_seconds = QDoubleSpinBox()
        self.step_seconds.setObjectName("dbloadStepSpin")
        self.step_seconds.setRange(low, high)
        self.step_seconds.setDecimals(0)
        self.step_seconds.setSuffix(" s")
        self.step_seconds.setValue(float(_default(test, "step_seconds", 10)))
        self.step_seconds.setToolTip("How long each step of the sweep loads the server")
        self.rate = QSpinBox()
        self.rate.setObjectName("dbloadRateSpin")
        self.rate.setRange(0, 100_000_000)
        self.rate.setGroupSeparatorShown(True)
        self.rate.setSuffix(" ops/s")
        self.rate.setSpecialValueText("as fast as it answers")
        self.rate.setToolTip("Constant-rate mode: requests at this rate, latency measured from each request's "
                             "intended start, so a stalled server cannot hide behind fewer requests")
        self.p99_limit = QDoubleSpinBox()
        self.p99_limit.setObjectName("dbloadP99Spin")
        self.p99_limit.setRange(0.0, 600_000.0)
        self.p99_limit.setDecimals(0)
        self.p99_limit.setSuffix(" ms")
        self.p99_limit.setSpecialValueText("no limit")
        self.p99_limit.setToolTip("Stop the sweep at the first step whose p99 latency is over this")
        low, high = _limits(test, "max_tries", 0, 1000)
        self.max_tries = QSpinBox()
        self.max_tries.setObjectName("dbloadMaxTriesSpin")
        self.max_tries.setRange(int(low), int(high))
        self.max_tries.setValue(int(_default(test, "max_tries", 1)))
        self.max_tries.setSpecialValueText("until the step ends" if low == 0 else "")
        self.max_tries.setSizePolicy(QSizePolicy.Policy.Maximum, QSizePolicy.Policy.Fixed)   # as wide as its text
        self.max_tries.setToolTip("pgbench's --max-tries: how many times a transaction that failed on a "
                                  "serialization or deadlock error is tried before it counts as an error "
                                  "(1: never retried; 0: retried until the step ends). Retries are counted "
                                  "per second beside the errors; pgbench 15 or newer")
        self.user = QLineEdit(str(_default(test, "user", "") or ""))
        self.user.setObjectName("dbloadUserEdit")
        self.user.setPlaceholderText("the engine's default")
        self.password = QLineEdit()
        self.password.setObjectName("dbloadPasswordEdit")
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setToolTip("Sent to the agent over SSH when the run starts; never written to disk, stored or "
                                 "put on a command line")
        self.get_ratio = QDoubleSpinBox()
        self.get_ratio.setObjectName("dbloadGetRatioSpin")
        self.get_ratio.setRange(0.0, 1.0)
        self.get_ratio.setSingleStep(0.05)
        self.get_ratio.setValue(float(_default(test, "get_ratio", 0.9)))
        self.get_ratio.setToolTip("The share of GETs among the requests (the rest are SETs)")
        self.value_size = QSpinBox()
        self.value_size.setObjectName("dbloadValueSizeSpin")
        self.value_size.setRange(1, 64 << 20)
        self.value_size.setSuffix(" B")
        self.value_size.setValue(int(_default(test, "value_size", 100)))
        self.pipeline = QSpinBox()
        self.pipeline.setObjectName("dbloadPipelineSpin")
        self.pipeline.setRange(1, 10_000)
        self.pipeline.setValue(int(_default(test, "pipeline", 1)))
        self.pipeline.setToolTip("Requests sent before reading the replies, per connection")
        redis = QHBoxLayout()
        for label, widget in (("GET share:", self.get_ratio), ("Value:", self.value_size),
                              ("Pipeline:", self.pipeline)):
            redis.addWidget(QLabel(label))
            redis.addWidget(widget)
        redis.addStretch(1)
        self.redis_row = QWidget()
        self.redis_row.setLayout(redis)
        redis.setContentsMargins(0, 0, 0, 0)
        data = QHBoxLayout()
        data.setContentsMargins(0, 0, 0, 0)
        data.addWidget(self.data)
        data.addWidget(self.scale)
        data.addStretch(1)
        pace = field_row(("", self.step_seconds), ("Rate:", self.rate), ("Stop when p99 >", self.p99_limit))
        form = QFormLayout(self)
        form.addRow("Engine:", self.engine)
        form.addRow("Target (ADDR:PORT):", self.target)
        form.addRow("Server host:", self.server_host)
        form.addRow("Tool:", self.tool)
        form.addRow("Workload:", self.workload)
        form.addRow("Script:", self.script)
        form.addRow("Data:", data)
        form.addRow("Clients:", self.clients)
        form.addRow("Each step:", pace)
        form.addRow("Tries per transaction:", self.max_tries)
        form.addRow("Redis:", self.redis_row)
        form.addRow("User:", self.user)
        form.addRow("Password:", self.password)
        form.addRow("", _note("The test creates its own scratch database (PostgreSQL, MySQL) or key prefix (Redis) "
                              "and removes it at the end, on cancel and on failure."))
        self.known_hosts: list[str] = []
        self.together = _note("")
        self.together.setObjectName("dbloadTogetherNote")
        form.addRow("", self.together)
        self.set_client_hosts(1)
        self._form = form
        for edit in (self.target, self.server_host, self.script, self.clients, self.user, self.password):
            edit.textChanged.connect(lambda _t: self.changed.emit())
        for spin in (self.scale, self.rate, self.value_size, self.pipeline, self.max_tries):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        for spin in (self.step_seconds, self.p99_limit, self.get_ratio):
            spin.valueChanged.connect(lambda _v: self.changed.emit())
        for combo in (self.tool, self.workload, self.data):
            combo.currentIndexChanged.connect(lambda _i: self._update())
        self.engine.currentIndexChanged.connect(lambda _i: self._engine_changed())
        self._engine_changed()

    def set_client_hosts(self, count: int, known: list[str] | None = None) -> None:
        """Several hosts ticked: they are clients of the one target, started together. known: the host list's
        names (the server host must be one of them)."""
        if known is not None:
            self.known_hosts = list(known)
        self.together.setText(f"The {count} hosts are clients of this one server: each step starts on all of them "
                              "at one instant; the Live tab shows the TOTAL per second and each client's share."
                              if count > 1 else "")
        self.together.setVisible(count > 1)

    def _engine_changed(self) -> None:
        engine = str(self.engine.currentData())
        port = next(p for _t, key, p in ENGINES if key == engine)
        self.target.setPlaceholderText(f"10.0.0.5:{port}")
        for combo, items in ((self.tool, TOOLS[engine]), (self.workload, WORKLOADS[engine])):
            combo.blockSignals(True)
            combo.clear()
            for text, key in items:
                combo.addItem(text, key)
            combo.blockSignals(False)
        self._update()

    def _update(self) -> None:
        engine = str(self.engine.currentData())
        self._form.setRowVisible(self.script, self.workload.currentData() == "script")
        self._form.setRowVisible(self.redis_row, engine == "redis")
        self._form.setRowVisible(self.max_tries, engine == "postgresql")   # only pgbench retries
        self.scale.setVisible(self.data.currentData() == "scale")
        self.changed.emit()

    def params(self) -> dict[str, Any]:
        """The agent's parameters; ValueError naming what is wrong before the agent is asked."""
        engine = str(self.engine.currentData())
        target = self.target.text().strip()
        if not target:
            raise ValueError("name the database server to load: its ADDR:PORT as the client host reaches it")
        workload = str(self.workload.currentData())
        if workload == "script":
            path = self.script.text().strip()
            if not path.startswith("/"):
                raise ValueError("the pgbench script must be an absolute path on the client host")
            workload = f"script:{path}"
        data = str(self.data.currentData())
        clients = self.clients.text().replace(" ", "")
        params: dict[str, Any] = {"engine": engine, "target": target, "tool": self.tool.currentData(),
                                  "workload": workload,
                                  "data": f"scale={self.scale.value()}" if data == "scale" else data,
                                  "clients": clients or DEFAULT_CLIENTS,
                                  "step_seconds": int(self.step_seconds.value())}
        if self.rate.value():
            params["rate"] = self.rate.value()
        if self.p99_limit.value():
            params["p99_limit_ms"] = self.p99_limit.value()
        server = self.server_host.text().strip()
        if server and self.known_hosts and server not in self.known_hosts:
            raise ValueError(f"the server host {server} is not in the host list: add it, or leave Server host empty")
        if server:
            params["target_host"] = server
        if self.user.text().strip():
            params["user"] = self.user.text().strip()
        if self.password.text():
            params["password"] = self.password.text()
        if engine == "postgresql" and self.max_tries.value() != 1:
            params["max_tries"] = self.max_tries.value()
        if engine == "redis":
            params.update(get_ratio=round(self.get_ratio.value(), 2), value_size=self.value_size.value(),
                          pipeline=self.pipeline.value())
        return params
