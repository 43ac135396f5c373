"""The comparison a customer reads: rows per server, best figures, ratios to a baseline, caveats beside numbers."""
from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta, timezone

import pytest

from app.compare.model import RunInput, build, ratio_text
from app.compare.table import csv_text, text_table
from storage.records import ResultSample, RunRecord

T0 = datetime(2026, 11, 21, 9, 0, tzinfo=timezone.utc)
GiB = 1 << 30


def record(run_id: int, host: str, test: str, status: str = "done", minutes: int = 0) -> RunRecord:
    start = T0 + timedelta(minutes=minutes)
    return RunRecord(run_id, host, test, status, {}, start, start + timedelta(minutes=2), "1", "agent", "1", "",
                     (), "")


def facts(rotational: bool = False, ram: int = 16 * GiB) -> dict:
    return {"cpu": {"model": "Xeon Gold 6338", "sockets": 2, "cores": 64, "threads": 128},
            "memory": {"total_bytes": ram}, "virtualization": "none",
            "disks": [{"name": "sda", "size_bytes": 960_000_000_000, "rotational": rotational}],
            "test_dir": {"path": "/srv", "device": "/dev/sda1"}}


def disk(iops: float, sync_iops: float = 900.0, p99: float = 0.2, engine: str = "fio", cached: bool = False,
         sweep: tuple[float, ...] = ()) -> list[ResultSample]:
    meta = {"engine": engine, "engine_version": "fio-3.33" if engine == "fio" else "1", "direct": not cached,
            "cached": cached, "file_size": 256 << 20}
    out = [ResultSample("disk", "randread_4k.iops", iops, "IOPS", meta),
           ResultSample("disk", "randread_4k.lat_p99", p99, "ms", meta),
           ResultSample("disk", "syncwrite_4k.iops", sync_iops, "IOPS", dict(meta, sync="fdatasync"))]
    out += [ResultSample("disk", f"sweep_randread_4k_w{w}.iops", v, "IOPS", meta)
            for w, v in zip((1, 4, 16), sweep, strict=False)]
    return out


def cpu(multi: float, zlib: str = "1.2.13") -> list[ResultSample]:
    meta = {"python": "3.11.2", "zlib": zlib, "openssl": "OpenSSL 3.0.11", "workers": 8}
    return [ResultSample("cpu", "single", multi / 6, "ops/s", meta), ResultSample("cpu", "multi", multi, "ops/s", meta)]


def test_rows_best_and_ratio_to_the_baseline() -> None:
    runs = [RunInput(record(1, "old-server", "disk"), facts(), disk(5_000, p99=0.8)),
            RunInput(record(2, "new-server", "disk"), facts(), disk(17_000, p99=0.2, sweep=(17_000, 52_000, 61_000)))]
    comparison = build(runs, baseline_run_id=1)
    old, new = comparison.rows
    assert (old.label, new.label) == ("old-server", "new-server")
    assert old.baseline and not new.baseline
    iops = "disk:randread_4k.iops"
    assert new.cells[iops].best and not old.cells[iops].best
    assert new.cells[iops].ratio_text == "3.4x"
    # latency: lower is better, and the ratio still says "times as good"
    lat = "disk:randread_4k.lat_p99"
    assert new.cells[lat].ratio_text == "4.0x"
    # one run each of a tail latency: 4x is within how far p99 wanders from run to run, so no star
    assert not new.cells[lat].best and new.cells[lat].kind == "cant_tell"
    assert old.cells[iops].ratio_text == "1.0x"
    # the best sweep point says at how many workers
    sweep = new.cells["disk:sweep_best.iops"]
    assert sweep.value == 61_000 and sweep.note == "16 workers"
    assert "disk:sweep_best.iops" not in old.cells
    assert "Xeon Gold 6338" in new.spec and "2s/64c/128t" in new.spec
    summary = comparison.summary()
    assert "old-server (baseline) has 5,000 IOPS; new-server: ahead of old-server by 3.4" in summary


def test_a_hosts_tests_share_a_row_and_a_repeated_test_gets_a_dated_row() -> None:
    runs = [RunInput(record(1, "db1", "disk"), facts(), disk(9_000)),
            RunInput(record(2, "db1", "cpu"), facts(), cpu(400.0)),
            RunInput(record(3, "db1", "disk", minutes=60), facts(), disk(12_000)),
            RunInput(record(4, "db2", "cpu"), facts(), cpu(800.0))]
    comparison = build(runs)
    labels = [row.label for row in comparison.rows]
    assert labels == ["db1 2026-11-21 09:00", "db1 2026-11-21 10:00", "db2"]
    assert comparison.rows[0].run_ids == (1, 2)
    assert comparison.rows[2].cells["cpu:multi"].best
    assert comparison.baseline is None and comparison.rows[0].cells["cpu:multi"].ratio is None
    assert "CPU all cores: db2 leads with 800 ops/s; db1 2026-11-21 09:00: 0.50x of db2 (0.35–0.72)." \
        in comparison.winners()


def test_caveats_sit_beside_the_figures_they_concern() -> None:
    mail_synth = [ResultSample("mailstorm", "accepted_per_s", 900.0, "msg/s", {"synthetic": True, "messages": 2000}),
                  ResultSample("mailstorm", "accepted", 2000, "messages", {"synthetic": True})]
    restore = [ResultSample("restore", "restore_jN.total_s", 41.0, "s", {"kind": "postgresql", "fsync": "off",
                                                                          "durable": False})]
    runs = [RunInput(record(1, "hdd-box", "disk"), facts(rotational=True), disk(300, sync_iops=4_000, cached=True)),
            RunInput(record(2, "hdd-box", "mailstorm"), facts(rotational=True), mail_synth),
            RunInput(record(3, "nvme-box", "disk"), facts(), disk(90_000, sync_iops=400, engine="builtin")),
            RunInput(record(4, "nvme-box", "restore"), facts(), restore, ["restore: the server runs with fsync off"])]
    comparison = build(runs)
    hdd, nvme = comparison.rows
    assert "cached" in hdd.cells["disk:randread_4k.iops"].tags
    assert "write cache?" in hdd.cells["disk:syncwrite_4k.iops"].tags
    assert "write cache?" not in hdd.cells["disk:randread_4k.iops"].tags
    assert "synthetic" in hdd.cells["mailstorm:accepted_per_s"].tags
    assert "synthetic" not in hdd.cells["disk:randread_4k.iops"].tags
    assert "non-durable" in nvme.cells["restore:restore_jN.total_s"].tags
    assert "cached" not in nvme.cells["disk:randread_4k.iops"].tags
    # engines differ: a caveat on every disk column, of both servers
    assert "engines differ" in nvme.cells["disk:randread_4k.iops"].tags
    assert "engines differ" in hdd.cells["disk:syncwrite_4k.iops"].tags
    lines = comparison.caveat_lines()
    assert any(line.startswith("hdd-box: Cached I/O") for line in lines)
    assert any("fio 3.33 on hdd-box" in line and "built-in 1 on nvme-box" in line for line in lines)
    assert any(line.startswith("nvme-box: Restore on a server with fsync off") for line in lines)
    # a lead that rests on a caveated figure says so in the winner's sentence too
    assert any(line.startswith("Disk, sync write 4 KiB: hdd-box leads with 4,000 IOPS (caveat: cached")
               and "nvme-box: 0.100x of hdd-box (" in line
               for line in comparison.winners())
    # the agent's own warning about the same thing is not listed twice
    assert sum("fsync off" in line for line in lines) == 1


def test_failed_runs_and_cpu_library_versions_are_flagged() -> None:
    runs = [RunInput(record(1, "a", "cpu", status="cancelled"), facts(), cpu(100.0, zlib="1.2.13")),
            RunInput(record(2, "b", "cpu"), facts(), cpu(200.0, zlib="1.3"))]
    comparison = build(runs)
    assert "cancelled" in comparison.rows[0].cells["cpu:multi"].tags
    assert "versions differ" in comparison.rows[1].cells["cpu:single"].tags
    assert any("zlib 1.2.13 on a vs 1.3 on b" in line for line in comparison.caveat_lines())


def test_csv_holds_the_stored_values_and_ratios() -> None:
    runs = [RunInput(record(1, "a", "disk"), facts(), disk(5_123.25)),
            RunInput(record(2, "b", "disk"), facts(), disk(20_493.0, cached=True))]   # 4x: beyond one run's noise
    rows = list(csv.DictReader(io.StringIO(csv_text(build(runs, baseline_run_id=1)))))
    assert [r["server"] for r in rows] == ["a", "b"]
    assert float(rows[0]["Random read 4 KiB (IOPS)"]) == 5_123.25
    assert float(rows[1]["Random read 4 KiB (IOPS)"]) == 20_493.0
    assert float(rows[1]["Random read 4 KiB ratio to baseline"]) == 4.0
    assert rows[1]["Random read 4 KiB caveats"] == "cached, file < RAM"
    assert rows[0]["Random read 4 KiB caveats"] == ""
    assert "Random read 4 KiB" in rows[1]["best in"]
    assert rows[0]["run_ids"] == "1"


def test_text_table_marks_best_and_baseline() -> None:
    runs = [RunInput(record(1, "a", "disk"), facts(), disk(5_000)),
            RunInput(record(2, "b", "disk"), facts(), disk(20_000))]   # 4x: beyond one disk run's noise
    text = text_table(build(runs, baseline_run_id=1)).text()
    assert "a (baseline)" in text and "*20,000 — ahead of a by 4.0" in text and "5,000 — baseline" in text


def test_bad_baseline_and_empty_selection_are_refused() -> None:
    with pytest.raises(ValueError, match="pick at least one run"):
        build([])
    with pytest.raises(ValueError, match="baseline run 9 is not one of the compared runs"):
        build([RunInput(record(1, "a", "disk"), None, disk(1.0))], baseline_run_id=9)


def test_ratio_text() -> None:
    assert [ratio_text(r) for r in (None, 0.5, 1.0, 3.44, 12.6)] == ["", "0.50x", "1.0x", "3.4x", "13x"]
