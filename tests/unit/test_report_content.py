"""What the customer report says, gathered from a real store: winners and ties on page 1, how each test was
run in sentences, each caveat under its own test, telemetry."""
from __future__ import annotations

import re

import pytest

from app.report.content import ReportError, ReportOptions, gather
from app.report.methodology import own_parameters
from tests.fixtures.comparison_runs import (
    T0,
    THREE,
    store_same_cpu_three_times,
    store_three_servers,
    store_two_servers,
    stored_parameters,
)


@pytest.fixture
def stored(workbench):
    return workbench, store_two_servers(workbench.store)


@pytest.fixture
def three(workbench):
    return workbench, store_three_servers(workbench.store)


def test_page_one_lines_say_every_servers_standing_with_factor_and_range(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"], ReportOptions(title="Replacement"))
    lines = {h.what: h for h in data.headlines}
    assert lines["Random read 4 KiB"].text.startswith(
        "Random read 4 KiB: old-server (baseline) has 5,000 IOPS; new-server: ahead of old-server by 3.4")
    assert lines["Random read 4 KiB"].detail == "higher is better"
    assert "write cache?" in lines["Sync write 4 KiB"].standings[0].tags
    assert "new-server: ahead of old-server by 5.4" in lines["Mail storm accepted"].text
    [cpu] = lines["CPU all cores"].standings
    assert cpu.verdict == "ahead" and cpu.factor == pytest.approx(6.8, rel=0.01) and cpu.lo < cpu.factor < cpu.hi
    # page 1 says what the summary says
    for line in data.headlines:
        for standing in line.standings:
            assert f"{standing.row}: {standing.text}" in data.comparison.summary()
    assert data.run_notes == (("old-server (disk)", "disk", "The production box, bought in 2019."),)


def test_a_winning_baseline_is_the_reference_and_the_other_is_behind_by_its_factor(stored) -> None:
    bench, ids = stored
    data = gather(bench, [ids["old_disk"], ids["new_disk"]], ids["new_disk"])
    assert data.headlines[0].text.startswith(
        "Random read 4 KiB: new-server (baseline) has 17,000 IOPS; old-server: 0.294x of new-server (")


def test_the_same_machine_three_times_names_no_winner(workbench) -> None:
    ids = store_same_cpu_three_times(workbench.store)
    data = gather(workbench, ids)
    [line] = data.headlines
    assert len(line.standings) == 2 and {s.verdict for s in line.standings} <= {"tie", "cant_tell"}
    assert "ahead" not in line.text and "x of" not in line.text


def test_servers_far_apart_still_have_a_winner(three) -> None:
    bench, ids = three
    data = gather(bench, [ids[f"{host}:cpu"] for host in THREE], ids["db-02:cpu"])
    [line] = data.headlines
    assert line.text.startswith("CPU all cores: db-02 (baseline) has ")
    assert "db-01: ahead of db-02 by 7.2" in line.text


def test_a_single_server_gets_its_figures_on_page_one(three) -> None:
    bench, ids = three
    data = gather(bench, [run_id for key, run_id in ids.items() if key.startswith("db-01:")])
    lines = {h.what: h for h in data.headlines}
    assert lines["Random read 4 KiB"].text == "Random read 4 KiB: 90,000 IOPS on db-01"
    assert lines["Random read 4 KiB"].detail == "higher is better"
    assert lines["Restore -j N"].text == "Restore -j N: 140 s on db-01"
    assert not any(h.standings for h in data.headlines)


def test_methodology_is_sentences_with_the_parameters_that_matter(three) -> None:
    bench, ids = three
    data = gather(bench, list(ids.values()), ids["db-02:disk"])
    methods = {m.test: m.text for m in data.methods}
    assert list(methods) == ["disk", "cpu", "mailstorm", "restore"]
    disk = methods["disk"]
    for said in ("for 5 s each after a 1 s warm-up", "256 MiB test file with O_DIRECT", "fdatasync",
                 "1, 4 and 16 parallel workers", "fio 3.33 on every server", "Each server ran it once"):
        assert said in disk, said
    assert "read-ahead" not in disk.lower()     # the quick preset does not sweep it
    assert "Python 3.11.2, zlib 1.2.13, OpenSSL 3.0.11" in methods["cpu"]
    assert "2,000 messages of 4 KiB" in methods["mailstorm"] and "postfix 3.7.10" in methods["mailstorm"]
    assert "cloud-vm: no MTA was listening" in methods["mailstorm"]    # said for the server it concerns
    assert "db-01 and db-02: the parallel restore used 8 jobs; cloud-vm: the parallel restore used 4 jobs" \
        in methods["restore"]
    everything = " ".join(methods.values())
    assert not re.search(r"\b\w+=\S", everything), everything
    for raw in ("margin", "interval", "300", "readahead_kb", "sink_confirmed"):
        assert raw not in everything, raw


def test_methodology_names_the_read_ahead_sweep_only_when_it_ran(workbench) -> None:
    run_id = workbench.store.runs.create("db-01", "disk", stored_parameters("disk", preset="full"))
    workbench.store.runs.finish(run_id, "done")
    [method] = gather(workbench, [run_id]).methods
    assert "read-ahead of 16, 128, 1024 and 4096 KiB" in method.text
    assert "2 GiB test file" in method.text and "It ran once" in method.text


def test_methodology_says_how_many_times_a_repeated_test_ran(workbench) -> None:
    repeats = store_same_cpu_three_times(workbench.store, host="db-01")
    for index, run_id in enumerate(repeats, start=1):
        workbench.store.runs.set_repeat(run_id, "a" * 32, index)
    [once] = store_same_cpu_three_times(workbench.store, host="db-02")[:1]
    data = gather(workbench, repeats + [once])
    assert [row.label for row in data.comparison.rows] == ["db-01", "db-02"]
    [method] = data.methods
    ids = f"{repeats[0]}, {repeats[1]} and {repeats[2]}"
    assert "db-01 3 times from" in method.text and f"(runs {ids}); its figure is the median" in method.text
    assert "db-02 once, on" in method.text and f"(run {once})" in method.text


def test_secrets_never_reach_the_methodology(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"])
    assert not any("hunter2" in m.text for m in data.methods)
    assert own_parameters({"params": {"dsn": "host=db password=x", "pg_password": "x", "api_token": "y",
                                       "size_mb": 256}, "margin": 300.0}) == {"size_mb": 256}


def test_each_caveat_is_placed_once_under_the_test_it_concerns(three) -> None:
    bench, ids = three
    bench.store.runs.add_events(ids["cloud-vm:restore"], [
        {"seq": 9, "t": T0 + 9, "type": "warning", "message": "restore: the scratch disk is almost full"}])
    data = gather(bench, list(ids.values()), ids["db-02:disk"])
    texts = [note.text for note in data.caveats]
    assert len(texts) == len(set(texts))
    by_text = {note.text: note for note in data.caveats}
    cached = next(note for note in data.caveats if note.text.startswith("Cached I/O"))
    assert (cached.test, cached.whom) == ("disk", "cloud-vm")
    synthetic = next(note for note in data.caveats if note.text.startswith("Synthetic mail storm"))
    assert synthetic.test == "mailstorm"
    # a warning concerns no figure in particular: it stays with its own run's test, not every test of the row
    assert by_text["restore: the scratch disk is almost full"].test == "restore"
    assert [n.test for n in data.caveats] == sorted((n.test for n in data.caveats),
                                                     key=["disk", "cpu", "mailstorm", "restore"].index)


def test_telemetry_overlays_per_test_aligned_on_the_test_start(stored) -> None:
    bench, ids = stored
    data = gather(bench, list(ids.values()), ids["old_disk"])
    found = {(o.test, o.name): o for o in data.overlays}
    assert set(found) == {("disk", "disk.util"), ("disk", "load.1"), ("cpu", "cpu.busy"), ("cpu", "load.1")}
    util = found[("disk", "disk.util")]
    assert [(s.label, s.device) for s in util.series] == [("old-server", "sda"), ("new-server", "nvme0n1")]
    # the test started 5 s after the telemetry: the first sample (at 1 s) sits at -4 s
    assert util.series[0].t[0] == pytest.approx(-4.0)


def test_mail_storms_overlay_their_accepts_and_queue(three) -> None:
    bench, ids = three
    data = gather(bench, [ids[f"{host}:mailstorm"] for host in THREE])
    found = {o.name: o for o in data.overlays if o.test == "mailstorm"}
    accepted = found["mail.accepted"]
    assert accepted.title == "Accepted messages per second"
    assert [s.label for s in accepted.series] == list(THREE)
    assert [s.label for s in found["mail.queue"].series] == ["db-01", "db-02"]    # a synthetic storm has no queue
    assert list(found)[:2] == ["mail.accepted", "mail.queue"]


def test_every_server_keeps_its_window_colour(three) -> None:
    from widgets.host_colours import host_colour

    bench, ids = three
    data = gather(bench, list(ids.values()))
    assert {label: data.colour(label) for label in THREE} == {label: host_colour(label, THREE) for label in THREE}
    assert len(set(data.colours.values())) == 3


def test_a_missing_logo_or_a_wrong_page_size_is_refused(stored) -> None:
    bench, ids = stored
    with pytest.raises(ReportError, match="no logo file"):
        gather(bench, [ids["old_disk"]], None, ReportOptions(logo_path="/nonexistent/logo.png"))
    with pytest.raises(ValueError, match="A4, Letter"):
        ReportOptions(page_size="A5")
