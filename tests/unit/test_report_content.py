"""What the customer report says, gathered from a real store: winners on page 1, methods, telemetry."""
from __future__ import annotations

import pytest

from app.report.content import ReportError, ReportOptions, gather, parameters_text
from tests.fixtures.comparison_runs import store_two_servers


@pytest.fixture
def stored(workbench):
    return workbench, store_two_servers(workbench.store)


def test_page_one_lines_say_who_wins_by_how_much_with_the_caveats(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"], ReportOptions(title="Replacement"))
    lines = {h.what: h for h in data.headlines}
    assert lines["Random read 4 KiB"].text == "Random read 4 KiB: new-server 3.4x old-server"
    assert lines["Random read 4 KiB"].detail == "17,000 vs 5,000 IOPS, higher is better"
    assert "write cache?" in lines["Sync write 4 KiB"].tags
    assert lines["Mail storm accepted"].text == "Mail storm accepted: new-server 5.4x old-server"
    assert lines["Mail storm accepted"].tags == "synthetic"
    assert lines["CPU all cores"].ratio == "6.8x"
    assert data.run_notes == (("old-server (disk)", "disk", "The production box, bought in 2019."),)


def test_a_winning_baseline_is_compared_with_the_runner_up(stored) -> None:
    bench, ids = stored
    data = gather(bench, [ids["old_disk"], ids["new_disk"]], ids["new_disk"])
    assert data.headlines[0].text == "Random read 4 KiB: new-server 3.4x old-server"


def test_methodology_shows_engines_and_versions_but_never_secrets(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"])
    methods = {m.run_id: m for m in data.methods}
    disk = methods[ids["old_disk"]]
    assert disk.server == "old-server (disk)" and disk.test == "Disk"
    assert disk.parameters == "preset=quick, runtime=30, size=2G"
    assert not any("hunter2" in repr(m) for m in data.methods)
    assert disk.engine == "fio 3.33" and disk.agent_version == "0.4.1" and disk.status == "done"
    assert methods[ids["new_cpu"]].engine == "python 3.11.2, zlib 1.2.13, OpenSSL 3.0.11"
    assert parameters_text({"dsn": "host=db", "pg_password": "x", "api_token": "y"}) == "dsn=host=db"


def test_telemetry_overlays_per_test_aligned_on_the_test_start(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"])
    found = {(o.test, o.name): o for o in data.overlays}
    assert set(found) == {("disk", "disk.util"), ("disk", "load.1"), ("cpu", "cpu.busy"), ("cpu", "load.1")}
    util = found[("disk", "disk.util")]
    assert [(s.label, s.device) for s in util.series] == [("old-server", "sda"), ("new-server", "nvme0n1")]
    # the test started 5 s after the telemetry: the first sample (at 1 s) sits at -4 s
    assert util.series[0].t[0] == pytest.approx(-4.0)


def test_a_missing_logo_or_a_wrong_page_size_is_refused(stored) -> None:
    bench, ids = stored
    with pytest.raises(ReportError, match="no logo file"):
        gather(bench, [ids["old_disk"]], None, ReportOptions(logo_path="/nonexistent/logo.png"))
    with pytest.raises(ValueError, match="A4, Letter"):
        ReportOptions(page_size="A5")
