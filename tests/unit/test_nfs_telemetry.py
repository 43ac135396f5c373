"""NFS telemetry: /proc/self/mountstats of NFSv3 and NFSv4 mounts (tests/fixtures/mountstats, two reads
of each, in the kernel's format) through the sampler's parser, with nfsiostat's figures worked out by
hand (nfs-utils tools/nfs-iostat/nfs-iostat.py: ops/s = Δsends/t, rpc bklog = Δbacklog/Δsends/t,
per op kB/s = Δ(bytes sent + received)/1024/t, kB/op = the same kB / Δops, retrans = Δtrans - Δops,
RTT, exe and queue ms per op = Δms / Δops, errors = Δerrors). Network filesystems without counters
(FUSE's sshfs, cifs) are named, not given zeros."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.cli.monitor import _TextPrinter
from remote.telemetry.compute import TelemetryComputer
from remote.telemetry.mountstats import parse_mountstats, unescape
from remote.telemetry.nfs_compute import nfs_figures
from remote.telemetry.parse import RawTickParser
from remote.telemetry.sample import TelemetrySample, samples_to_series, series_to_samples

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "mountstats"
HEADER = "@benchbay-telemetry 1\n@interval 1\n@clock 1700000000.00 1000.00\n@disks vda\n@header-end\n"


def mountstats(name: str) -> str:
    return (FIXTURES / f"{name}.mountstats").read_text()


def tick(seq: int, uptime: str, stats: str) -> str:
    return (f"@tick {seq}\n@uptime\n{uptime} 1.00\n@stat\ncpu  1000 0 500 8000 100 10 40 50 0 0\n@diskstats\n"
            f" 254 0 vda {' '.join(['0'] * 17)}\n@loadavg\n0.50 0.40 0.30 2/100 99\n@meminfo\nMemTotal: 1000 kB\n"
            f"MemAvailable: 500 kB\n@mountstats\n{stats}@end {seq}\n")


def through_sampler(first: str, second: str, seconds: float) -> TelemetrySample:
    """Two reads as the sampler writes them, parsed and computed as a run does."""
    parser = RawTickParser()
    snaps = parser.feed((HEADER + tick(1, "2000.00", first) + tick(2, f"{2000 + seconds:.2f}", second)).encode())
    assert parser.bad_ticks == 0 and parser.garbage_lines == 0 and len(snaps) == 2
    computer = TelemetryComputer()
    assert computer.add(snaps[0]) is None
    sample = computer.add(snaps[1])
    assert sample is not None
    return sample


def test_nfs3_mount_is_parsed_with_its_counters() -> None:
    table = parse_mountstats(mountstats("nfs3_t0").splitlines())
    assert set(table.nfs) == {"/mnt/home", "/mnt/scratch space"}       # "\040" is a space in the name
    home = table.nfs["/mnt/home"]
    assert (home.export, home.fstype, home.age) == ("fileserver:/export/home", "nfs", 86400)
    assert (home.sends, home.backlog) == (1523402, 4107851)             # xprt tcp: words 7 and 11
    assert home.ops["READ"] == (412003, 412010, 0, 60160438, 27001003520, 102400, 1648012, 1690050)
    assert table.nfs["/mnt/scratch space"].sends == 1523                 # xprt udp: word 4
    assert table.network == {"/mnt/home": "nfs", "/mnt/scratch space": "nfs"}   # no local disk listed


def test_nfs3_figures_as_nfsiostat_prints_them() -> None:
    sample = through_sampler(mountstats("nfs3_t0"), mountstats("nfs3_t1"), 5.0)
    home = sample.nfs["/mnt/home"]
    # t = 5.00 s; sends 1523402 -> 1529404 (6002: READ 2000 + 2 retransmitted, WRITE 3000, others 1000)
    assert home["ops_s"] == pytest.approx(6002 / 5)                     # 1200.4
    assert home["rpc_bklog"] == pytest.approx(1500 / 6002 / 5)           # 0.04998...
    # READ: 2000 ops, 2002 transmissions, 296000 B sent + 131272000 B received = 128484.375 kB
    assert home["read_ops_s"] == pytest.approx(400.0)
    assert home["read_kB_s"] == pytest.approx(128484.375 / 5)            # 25696.875
    assert home["read_kB_op"] == pytest.approx(128484.375 / 2000)        # 64.242...
    assert (home["read_retrans"], home["read_retrans_pct"]) == (2.0, pytest.approx(0.1))
    assert home["read_rtt_ms"] == pytest.approx(5000 / 2000)             # 2.5
    assert home["read_exe_ms"] == pytest.approx(5400 / 2000)             # 2.7
    assert home["read_queue_ms"] == pytest.approx(300 / 2000)            # 0.15
    # WRITE: 3000 ops, 393876000 + 384000 B = 385019.53125 kB, RTT 12000 ms, exe 12600 ms in total
    assert home["write_ops_s"] == pytest.approx(600.0)
    assert home["write_kB_s"] == pytest.approx(385019.53125 / 5)         # 77003.906
    assert home["write_kB_op"] == pytest.approx(385019.53125 / 3000)     # 128.34
    assert (home["write_retrans"], home["write_rtt_ms"], home["write_exe_ms"]) == (0.0, 4.0, 4.2)
    # a 4.18 kernel: 8 counters per operation, no error count, so none is shown
    assert not any(key.endswith(("errors", "errors_pct")) for key in home)
    # the read-only udp mount: 6 GETATTRs in 5 s, no reads or writes
    scratch = sample.nfs["/mnt/scratch space"]
    assert scratch["ops_s"] == pytest.approx(1.2) and scratch["read_ops_s"] == scratch["read_rtt_ms"] == 0.0


def test_nfs4_figures_with_error_counts() -> None:
    sample = through_sampler(mountstats("nfs4_t0"), mountstats("nfs4_t1"), 2.0)
    projects = sample.nfs["/srv/projects"]
    # t = 2.00 s; sends +3101 (READ 1000, WRITE 2000 + 1 retransmitted, GETATTR 100); backlog +6202
    assert projects["ops_s"] == pytest.approx(1550.5)
    assert projects["rpc_bklog"] == pytest.approx(6202 / 3101 / 2)      # 1.0
    # READ: 1000 ops of 4 KiB: 200000 B sent + 4196000 B received = 4292.96875 kB
    assert projects["read_ops_s"] == pytest.approx(500.0)
    assert projects["read_kB_s"] == pytest.approx(4292.96875 / 2)        # 2146.48
    assert projects["read_kB_op"] == pytest.approx(4.29296875)
    assert (projects["read_rtt_ms"], projects["read_exe_ms"], projects["read_queue_ms"]) == pytest.approx(
        (0.8, 0.9, 0.1))
    assert (projects["read_errors"], projects["read_errors_pct"]) == (0.0, 0.0)
    # WRITE: 2000 ops, 2001 transmissions, 8616000 + 320000 B = 8726.5625 kB, 2 errors
    assert projects["write_ops_s"] == pytest.approx(1000.0)
    assert projects["write_kB_s"] == pytest.approx(8726.5625 / 2)        # 4363.28
    assert projects["write_kB_op"] == pytest.approx(8726.5625 / 2000)    # 4.363
    assert (projects["write_retrans"], projects["write_retrans_pct"]) == (1.0, pytest.approx(0.05))
    assert (projects["write_rtt_ms"], projects["write_exe_ms"]) == pytest.approx((4.5, 4.9))
    assert (projects["write_errors"], projects["write_errors_pct"]) == (2.0, pytest.approx(0.1))
    # nconnect=2: one xprt line per transport, summed: (150 + 250) sends in 2 s
    builds = sample.nfs["/srv/builds"]
    assert builds["ops_s"] == pytest.approx(200.0) and builds["read_ops_s"] == pytest.approx(200.0)
    assert builds["read_kB_s"] == pytest.approx((80000 + 1640000) / 1024 / 2)


def test_network_filesystems_without_counters_are_named_not_zeroed() -> None:
    sample = through_sampler(mountstats("nfs4_t0"), mountstats("nfs4_t1"), 2.0)
    assert sample.netfs == {"/srv/projects": "nfs4", "/srv/builds": "nfs4", "/mnt/vault": "fuse.sshfs",
                            "/mnt/public": "cifs"}          # a local FUSE filesystem (gvfsd-fuse) is not one
    assert "/mnt/vault" not in sample.nfs and "/mnt/vault" not in sample.disks


def test_nfs_series_are_stored_under_the_mount_point_and_read_back() -> None:
    sample = through_sampler(mountstats("nfs4_t0"), mountstats("nfs4_t1"), 2.0)
    series = {(s.name, s.device): s for s in samples_to_series([sample], t0=1700000000.0)}
    assert series[("nfs.ops_s", "/srv/projects")].values == [pytest.approx(1550.5)]
    assert series[("nfs.ops_s", "/srv/projects")].unit == "1/s"
    assert series[("nfs.read_kB_s", "/srv/projects")].unit == "kB/s"
    assert series[("nfs.write_rtt_ms", "/srv/projects")].unit == "ms"
    assert series[("netfs.fuse.sshfs", "/mnt/vault")].values == [1.0]
    [back] = series_to_samples(series.values(), t0=1700000000.0)
    assert back.nfs == sample.nfs and back.netfs == sample.netfs


def test_a_remount_counts_from_zero_and_a_counter_that_goes_back_gives_zeros() -> None:
    t1 = parse_mountstats(mountstats("nfs3_t1").splitlines()).nfs["/mnt/home"]
    remounted = parse_mountstats(mountstats("nfs3_t0").replace("age:\t86400", "age:\t3").splitlines())
    # mounted again 3 s ago: its counters are what it did since, here t0's totals over 5 s
    fresh = nfs_figures(remounted.nfs["/mnt/home"], t1, 500)
    assert fresh["read_ops_s"] == pytest.approx(412003 / 5)
    assert nfs_figures(t1, None, 500)["ops_s"] == pytest.approx(1529404 / 5)   # appeared in the interval
    older = parse_mountstats(mountstats("nfs3_t0").replace("age:\t86400", "age:\t86410").splitlines())
    went_back = nfs_figures(older.nfs["/mnt/home"], t1, 500)              # not remounted, fewer ops: no figures
    assert went_back["ops_s"] == 0.0 and went_back["read_ops_s"] == 0.0 and went_back["write_kB_s"] == 0.0


@pytest.mark.parametrize("damage", ["cut", "garbage", "binary"])
def test_damaged_mountstats_never_crash(damage: str) -> None:
    text = mountstats("nfs4_t1")
    if damage == "cut":     # the read stopped in the middle of a block: that mount has no figures
        text = text[:text.index("xprt:")]
    elif damage == "garbage":
        text = text.replace("        READ: 2201100", "        READ: x2201100").replace("age:\t352213", "age: ")
    else:
        text = "device \x00\x01 mounted on with fstype\n\tage:\n\txprt: tcp\n" + text[:50]
    table = parse_mountstats(text.splitlines())
    if damage == "garbage":   # /srv/projects lost its age: left out; the other mount is whole
        assert "/srv/projects" not in table.nfs and "/srv/builds" in table.nfs
    else:
        assert "/srv/projects" not in table.nfs


def test_unescape() -> None:
    assert unescape(r"/mnt/a\040b\134c") == "/mnt/a b\\c"
    assert unescape("\\09x\\") == "\\09x\\"


def test_monitor_text_shows_nfs_columns_and_names_a_fuse_share_once(capsys) -> None:
    sample = through_sampler(mountstats("nfs4_t0"), mountstats("nfs4_t1"), 2.0)
    printer = _TextPrinter([], 2.0)
    printer.sample("h", sample)
    printer.sample("h", sample)
    lines = capsys.readouterr().out.splitlines()
    notes = [line for line in lines if line.startswith("# /mnt/vault")]
    assert len(notes) == 1 and "fuse.sshfs, a FUSE network filesystem" in notes[0]
    assert "no NFS or block-device counters" in notes[0]
    assert any(line.startswith("# /mnt/public: cifs") for line in lines)
    [head] = [line for line in lines if line.startswith("TIME")]
    assert head.split().count("NFS") == 2 and "r_rtt" in head
    row = lines[-1].split()
    at = row.index("/srv/projects")
    # ops/s, rkB/s, wkB/s, r_rtt, w_rtt, r_exe, w_exe, retrans
    assert row[at + 1:at + 9] == ["1550.5", "2146.5", "4363.3", "0.80", "4.50", "0.90", "4.90", "1"]
