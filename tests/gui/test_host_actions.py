"""The connect flow's questions (host key, password) with a scripted workbench, and the worker pool."""
from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from PySide6.QtWidgets import QDialog, QMessageBox, QWidget

from app.gui.host_actions import FactsFlow
from app.gui.workers import Worker, WorkerPool
from remote.errors import ConnectTimeout, HostKeyChanged, PasswordRequired, UnknownHostKey
from remote.hostspec import AUTH_PASSWORD, HostSpec
from widgets.fingerprint_dialog import FingerprintDialog
from widgets.host_list import STATUS_CONNECTING, STATUS_ERROR, STATUS_OK, STATUS_UNKNOWN
from widgets.password_dialog import PasswordDialog

pytestmark = pytest.mark.gui
UNKNOWN = UnknownHostKey("[10.0.0.5]:2222", "ssh-ed25519", "SHA256:abc", b"blob", "[10.0.0.5]:2222")


class ScriptedBench:
    """gather_facts raises the scripted errors in turn, then succeeds. Called from worker threads."""

    def __init__(self, *errors: BaseException) -> None:
        self.errors = list(errors)
        self.calls: list[str | None] = []
        self.trusted: list[object] = []
        self.remembered: list[tuple[str, str]] = []
        self.updated: list[HostSpec] = []
        self.threads: set[int] = set()
        spec = HostSpec(name="db1", address="10.0.0.5", auth=AUTH_PASSWORD)
        self.store = SimpleNamespace(hosts=SimpleNamespace(get=lambda name: spec))

    def gather_facts(self, name: str, password: str | None = None):
        self.threads.add(threading.get_ident())
        self.calls.append(password)
        if self.errors:
            raise self.errors.pop(0)
        return SimpleNamespace(run_id=1, host=name, facts={"hostname": name})

    def trust_key(self, offered: object) -> None:
        self.trusted.append(offered)

    def remember_password(self, name: str, password: str) -> bool:
        self.remembered.append((name, password))
        return True

    def update_host(self, old_name: str, spec: HostSpec) -> None:
        self.updated.append(spec)


@pytest.fixture
def flow_for(qtbot):
    def make(bench: ScriptedBench) -> tuple[FactsFlow, list]:
        parent = QWidget()
        qtbot.addWidget(parent)
        pool = WorkerPool(parent)
        flow = FactsFlow(bench, pool, parent)
        states: list[tuple[str, str, str]] = []
        flow.host_state.connect(lambda *args: states.append(args))
        qtbot.waitUntil(lambda: pool.active_count() == 0)   # the keyring probe
        return flow, states
    return make


def finish(qtbot, flow: FactsFlow) -> None:
    qtbot.waitUntil(lambda: flow._pool.active_count() == 0, timeout=10_000)


def test_unknown_key_accepted_is_trusted_then_retried(qtbot, flow_for, monkeypatch):
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: QDialog.DialogCode.Accepted.value)
    bench = ScriptedBench(UNKNOWN)
    flow, states = flow_for(bench)
    with qtbot.waitSignal(flow.facts_ready, timeout=10_000) as ready:
        flow.gather("db1")
    assert ready.args[0].host == "db1"
    assert bench.trusted == [UNKNOWN]
    assert len(bench.calls) == 2
    assert threading.get_ident() not in bench.threads   # the GUI thread never connects
    assert states[0][1] == STATUS_CONNECTING and states[-1][1] == STATUS_OK
    finish(qtbot, flow)


def test_unknown_key_rejected_is_not_trusted(qtbot, flow_for, monkeypatch):
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: QDialog.DialogCode.Rejected.value)
    bench = ScriptedBench(UNKNOWN)
    flow, states = flow_for(bench)
    flow.gather("db1")
    qtbot.waitUntil(lambda: states[-1][1] == STATUS_UNKNOWN)
    assert bench.trusted == [] and len(bench.calls) == 1
    finish(qtbot, flow)


def test_password_is_asked_and_remembered_on_opt_in(qtbot, flow_for, monkeypatch):
    def answer(dialog: PasswordDialog) -> int:
        dialog.password_edit.setText("s3cret")
        dialog.remember_box.setEnabled(True)
        dialog.remember_box.setChecked(True)
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(PasswordDialog, "exec", answer)
    bench = ScriptedBench(PasswordRequired("admin@db1: a password is needed"))
    flow, states = flow_for(bench)
    with qtbot.waitSignal(flow.facts_ready, timeout=10_000):
        flow.gather("db1")
    assert bench.calls == [None, "s3cret"]
    assert bench.remembered == [("db1", "s3cret")]
    finish(qtbot, flow)


def test_password_without_opt_in_is_not_stored(qtbot, flow_for, monkeypatch):
    def answer(dialog: PasswordDialog) -> int:
        dialog.password_edit.setText("s3cret")
        return QDialog.DialogCode.Accepted.value

    monkeypatch.setattr(PasswordDialog, "exec", answer)
    bench = ScriptedBench(PasswordRequired("needs a password"))
    flow, _states = flow_for(bench)
    with qtbot.waitSignal(flow.facts_ready, timeout=10_000):
        flow.gather("db1")
    assert bench.remembered == [] and bench.updated == []
    finish(qtbot, flow)


def test_a_host_that_keeps_asking_stops(qtbot, flow_for, monkeypatch):
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: QDialog.DialogCode.Accepted.value)
    bench = ScriptedBench(*[UNKNOWN] * 10)
    flow, states = flow_for(bench)
    flow.gather("db1")
    qtbot.waitUntil(lambda: states[-1][1] == STATUS_ERROR, timeout=10_000)
    assert len(bench.calls) == 4
    finish(qtbot, flow)


def test_changed_key_is_refused_without_a_question(qtbot, flow_for, monkeypatch):
    shown = []
    monkeypatch.setattr(QMessageBox, "exec", lambda box: shown.append(box.informativeText()) or 0)
    monkeypatch.setattr(FingerprintDialog, "exec", lambda _self: pytest.fail("must not ask"))
    bench = ScriptedBench(HostKeyChanged("db1", "ssh-ed25519", "SHA256:new", "SHA256:old"))
    flow, states = flow_for(bench)
    flow.gather("db1")
    qtbot.waitUntil(lambda: states[-1][1] == STATUS_ERROR)
    assert "SHA256:new" in shown[0] and "SHA256:old" in shown[0]
    assert len(bench.calls) == 1
    finish(qtbot, flow)


def test_other_errors_are_one_line(qtbot, flow_for):
    bench = ScriptedBench(ConnectTimeout("db1: no SSH banner within 10 s\n(second line)"))
    flow, states = flow_for(bench)
    with qtbot.waitSignal(flow.message, check_params_cb=lambda text: "banner" in text, timeout=10_000) as got:
        flow.gather("db1")
    assert got.args == ["db1: no SSH banner within 10 s"]   # not "db1: db1: ..."
    assert states[-1] == ("db1", STATUS_ERROR, "db1: no SSH banner within 10 s")
    finish(qtbot, flow)


def test_second_gather_for_a_busy_host_is_refused(qtbot, flow_for):
    release = threading.Event()
    bench = ScriptedBench()
    original = bench.gather_facts
    bench.gather_facts = lambda name, password=None: release.wait(10) and original(name, password)
    flow, _states = flow_for(bench)
    assert flow.gather("db1")
    assert flow.is_busy("db1")
    assert not flow.gather("db1")
    release.set()
    finish(qtbot, flow)
    assert not flow.is_busy("db1")


def test_worker_reports_result_or_exception_in_the_gui_thread(qtbot):
    pool = WorkerPool()
    seen = []
    ok = Worker(lambda a, b=0: a + b, 2, b=3)
    ok.finished.connect(lambda value: seen.append(("ok", value, threading.get_ident())))
    bad = Worker(lambda: 1 / 0)
    bad.failed.connect(lambda exc: seen.append(("failed", type(exc).__name__, threading.get_ident())))
    with qtbot.waitSignals([ok.done, bad.done], timeout=5000):
        pool.start(ok, key="a")
        pool.start(bad)
    qtbot.waitUntil(lambda: pool.active_count() == 0)
    me = threading.get_ident()
    assert sorted(seen) == [("failed", "ZeroDivisionError", me), ("ok", 5, me)]
    pool.deleteLater()


def test_cancelled_worker_stays_silent(qtbot):
    pool = WorkerPool()
    release = threading.Event()
    worker = Worker(release.wait, 10)
    worker.finished.connect(lambda _value: pytest.fail("a cancelled worker must not report"))
    pool.start(worker, key="slow")
    qtbot.waitUntil(worker.started.is_set)
    assert pool.running_keys() == {"slow"}
    pool.cancel_all()
    assert not pool.is_running("slow")
    release.set()
    assert pool.wait(5000)
    assert pool.active_count() == 0
    pool.deleteLater()


def test_a_job_that_outlives_its_signals_object_ends_quietly(qtbot):
    # quitting right after start-up deletes the application's objects while a job may still run: its end
    # must not raise in the pool thread ("Signal source has been deleted" printed as a traceback)
    import shiboken6

    worker = Worker(lambda: 42)
    shiboken6.delete(worker.signals)
    worker.run()   # in this thread, as the pool would
    assert worker.ended.is_set() and not worker.active
