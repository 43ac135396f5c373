"""Compare's "Telemetry during the tests" with a `local` run and a run on an SSH host whose clock is 3.5 h
behind this computer's (a real sshd test host, libfaketime in its sessions): each curve is its run's stored
samples, placed from its own test start, and the axis spans the tests — not the hours between the clocks
(the −3:30:00 to +4:30:00 axis with a one-pixel spike)."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from app.cli import main
from app.compare.overlay import pick
from tests.fixtures.sshd import ssh_keygen_fingerprint
from tests.gui.test_drawn_is_measured import assert_drawn_from, assert_same_window
from tests.integration.test_host_clocks import _host_with_clock, _require_faketime

pytestmark = [pytest.mark.gui, pytest.mark.integration]
BEHIND = -12_600   # 3.5 h
MEASURE_S = 4


def idle_run(host: str) -> None:
    assert main(["run", host, "--test", "idle", "--set", f'phases=[["measure","Measure",{MEASURE_S}]]',
                 "--interval", "0.5"]) == 0


def test_start(events: list[dict]) -> float:
    """Seconds from the series' t = 0 to the first phase the agent announced, both on the host's clock."""
    [telemetry] = [e for e in events if e["type"] == "telemetry"]
    t0 = telemetry.get("host_t0", telemetry["t0"])
    first = next(e for e in events if e["type"] == "phase_start")
    return float(first.get("host_t", first["t"])) - float(t0)


test_start.__test__ = False   # a helper, not a test


def test_compare_telemetry_of_a_local_and_an_ssh_run_on_clocks_hours_apart(cli_env, sshd_session, tmp_path,
                                                                         make_window, workbench, qtbot):
    _require_faketime()
    with _host_with_clock(tmp_path / "host", sshd_session.authorized, BEHIND) as server:
        assert main(["host", "add", "skewed", "--address", server.address, "--port", str(server.port), "--user",
                     "root", "--key", str(sshd_session.client_key)]) == 0
        assert main(["host", "trust", "skewed", "--fingerprint", ssh_keygen_fingerprint(server.host_key_path)]) == 0
        idle_run("skewed")
    idle_run("local")
    runs = {run.host_name: run.id for run in workbench.store.runs.list(test="idle")}
    assert set(runs) == {"local", "skewed"}

    window = make_window()
    compare = window.compare
    window.tabs.setCurrentWidget(compare)
    window.reload_runs()
    qtbot.waitUntil(lambda: len(compare.picker.shown_runs()) == 2, timeout=20_000)
    compare.picker.select_ids(list(runs.values()))
    qtbot.mouseClick(compare.picker.compare_button, Qt.MouseButton.LeftButton)
    overlay = compare.view.overlay
    qtbot.waitUntil(lambda: len(overlay.curves) == 2, timeout=20_000)
    for name in ("cpu.busy", "load.1"):
        overlay.metric_picker.setCurrentIndex(overlay.metric_picker.findData(name))
        qtbot.waitUntil(lambda: len(overlay.curves) == 2 and overlay.status.text() == "", timeout=20_000)
        spans = []
        for host, run_id in runs.items():
            curve = pick(workbench.run_series(run_id), name)
            shift = test_start(workbench.run_events(run_id))
            truth = {round(t - shift, 6): v for t, v in zip(curve.t, curve.values, strict=True)}
            assert_drawn_from(overlay.curves[run_id], 0.0, truth, f"Compare {name}, {host} run {run_id}")
            spans += [min(truth), max(truth)]
        # one time range for both runs, the seconds of the tests: no axis hours wide
        assert_same_window([overlay.plot.getPlotItem()], min(spans), max(spans), f"Compare {name}")
        low, high = overlay.plot.getPlotItem().getViewBox().viewRange()[0]
        assert low > -60 and high < MEASURE_S + 60, f"Compare {name}: the axis runs {low:.0f} s to {high:.0f} s"
