"""iostat -x arithmetic on hand-computed fixtures: every formula, 32-bit wraps, resets, device choice."""
from __future__ import annotations

import pytest

from remote.telemetry.compute import RD_SECT, TelemetryComputer
from remote.telemetry.parse import Header, RawTickParser, Snapshot
from remote.telemetry.sample import TelemetrySample, samples_to_series, series_to_samples

HEADER = Header(version=1, interval=2.0, epoch=1700000000.5, uptime=999.5,
                disks=frozenset({"vda", "sdb", "loop0", "dm-0"}), dm_names={"dm-0": "vg0-root"},
                parents={"vda1": "vda"})
WRAP = 1 << 32
#         rd_ios merges sect  ticks wr_ios merges sect  ticks flight io_ms  weighted dc_ios .. .. .. fl_ios fl_ms
VDA_0 = (1000, 10, 80000, 500, 2000, 40, 160000, 3000, 0, 1000, 4000, 0, 0, 0, 0, 0, 0)
VDA_1 = (1400, 30, 86400, 1300, 2100, 90, 161600, 3700, 3, 2500, 6500, 0, 0, 0, 0, 0, 0)
CPU_0 = {"user": 1000, "nice": 0, "system": 500, "idle": 8000, "iowait": 100, "irq": 10, "softirq": 40,
         "steal": 50, "guest": 200, "guest_nice": 0}
CPU_1 = {"user": 1300, "nice": 20, "system": 600, "idle": 8500, "iowait": 140, "irq": 20, "softirq": 50,
         "steal": 70, "guest": 300, "guest_nice": 0}


def snap(seq: int, uptime_cs: int, disks: dict, cpu: dict | None = None, psi: dict | None = None,
         mem: dict | None = None) -> Snapshot:
    return Snapshot(seq=seq, uptime_cs=uptime_cs, cpu=cpu or CPU_0, disks=disks, load=(1.5, 1.0, 0.5),
                    tasks=(3, 200), mem=mem or {"MemTotal": 1000000, "MemAvailable": 250000, "Dirty": 120,
                                                "Writeback": 30},
                    psi=psi or {}, header=HEADER)


def pair(prev: dict, cur: dict, computer: TelemetryComputer | None = None, **kw) -> TelemetrySample:
    computer = computer or TelemetryComputer()
    assert computer.add(snap(1, 100000, prev, kw.get("cpu0"), kw.get("psi0"))) is None
    sample = computer.add(snap(2, 100200, cur, kw.get("cpu1"), kw.get("psi1"), kw.get("mem")))
    assert sample is not None
    return sample


def test_every_disk_formula_over_two_seconds():
    sample = pair({"vda": VDA_0}, {"vda": VDA_1})
    assert sample.interval == 2.0
    assert sample.disks["vda"] == pytest.approx({
        "r/s": 200.0, "w/s": 50.0,            # 400 reads, 100 writes in 2 s
        "rkB/s": 1600.0, "wkB/s": 400.0,      # 6400 and 1600 sectors of 512 bytes
        "rrqm/s": 10.0, "wrqm/s": 25.0,
        "r_await": 2.0, "w_await": 7.0,       # 800 ms / 400 reads, 700 ms / 100 writes
        "rareq-sz": 8.0, "wareq-sz": 8.0,     # kB per request
        "aqu-sz": 1.25,                       # 2500 weighted ms in 2000 ms
        "util": 75.0,                         # 1500 ms busy of 2000 ms
    })


def test_no_requests_no_await_and_no_division_by_zero():
    sample = pair({"vda": VDA_0}, {"vda": VDA_0})
    assert set(sample.disks["vda"].values()) == {0.0}


def test_millisecond_counters_wrap_at_32_bits():
    prev = list(VDA_0)
    cur = list(VDA_1)
    prev[3], cur[3] = WRAP - 100, 700          # read ticks: +800 across the wrap
    prev[9], cur[9] = WRAP - 500, 1000         # io ticks: +1500
    prev[10], cur[10] = WRAP - 1, 2499         # weighted: +2500
    figures = pair({"vda": tuple(prev)}, {"vda": tuple(cur)}).disks["vda"]
    assert (figures["r_await"], figures["util"], figures["aqu-sz"]) == pytest.approx((2.0, 75.0, 1.25))


def test_a_reset_device_is_computed_from_zero_as_iostat_does():
    reset = (5, 0, 40, 1, 0, 0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0)
    figures = pair({"vda": VDA_1}, {"vda": reset}).disks["vda"]
    assert figures["r/s"] == 2.5 and figures["rkB/s"] == 10.0 and figures["r_await"] == 0.2
    assert figures["util"] == pytest.approx(0.1)


def test_a_counter_that_goes_back_without_a_reset_gives_zeros_not_nonsense():
    odd = list(VDA_1)
    odd[RD_SECT] = VDA_0[RD_SECT] - 1      # reads went up, sectors read went down: no rule fits
    figures = pair({"vda": VDA_0}, {"vda": tuple(odd)}).disks["vda"]
    assert set(figures.values()) == {0.0}


def test_util_is_not_capped_but_never_negative():
    cur = list(VDA_1)
    cur[9] = VDA_0[9] + 2100                   # the kernel said 2.1 s busy in 2 s
    assert pair({"vda": VDA_0}, {"vda": tuple(cur)}).disks["vda"]["util"] == pytest.approx(105.0)


def test_14_and_18_field_lines():
    short_0, short_1 = VDA_0[:11], VDA_1[:11]
    assert pair({"vda": short_0}, {"vda": short_1}).disks["vda"]["util"] == pytest.approx(75.0)
    assert pair({"sdb": VDA_0[:15]}, {"sdb": VDA_1[:15]}).disks["sdb"]["r/s"] == pytest.approx(200.0)


def test_whole_disks_only_dm_by_name_partitions_on_request():
    zero = (0,) * 17
    prev = {"vda": VDA_0, "vda1": VDA_0, "dm-0": VDA_0, "loop0": zero, "zram0": VDA_0}
    cur = {"vda": VDA_1, "vda1": VDA_0, "dm-0": VDA_1, "loop0": zero, "zram0": VDA_1}
    sample = pair(prev, cur)
    # loop0 never did any I/O (iostat hides it); vda1 is a partition; zram0 is not in the header's
    # /sys/block: it came after the sampler started, and its name makes it a whole disk
    assert sorted(sample.disks) == ["vda", "vg0-root", "zram0"]
    assert sample.disks["vda"]["r/s"] == pytest.approx(200.0)   # the partition is not added to its disk
    chosen = pair(prev, cur, TelemetryComputer(include={"vda1", "loop0"}))
    assert sorted(chosen.disks) == ["loop0", "vda", "vda1", "vg0-root", "zram0"]
    assert chosen.disks["vda1"]["r/s"] == 0.0
    everything = pair(prev, cur, TelemetryComputer(whole_disks_only=False))
    assert sorted(everything.disks) == ["loop0", "vda", "vda1", "vg0-root", "zram0"]


def test_a_device_that_appears_is_shown_from_its_first_tick_counted_from_zero():
    sample = pair({"vda": VDA_0}, {"vda": VDA_1, "sdb": VDA_0})
    assert sorted(sample.disks) == ["sdb", "vda"]
    assert sample.disks["sdb"]["r/s"] == 500.0      # 1000 reads since it appeared, in 2 s


def test_cpu_percentages_as_iostat_avg_cpu():
    sample = pair({}, {}, cpu0=CPU_0, cpu1=CPU_1)
    # T = 300 user + 20 nice + 100 system + 500 idle + 40 iowait + 10 irq + 10 softirq + 20 steal = 1000
    assert sample.cpu == pytest.approx({"user": 30.0, "nice": 2.0, "system": 12.0, "iowait": 4.0, "steal": 2.0,
                                        "idle": 50.0})
    backwards = dict(CPU_1, idle=CPU_0["idle"] - 5)
    assert pair({}, {}, cpu0=CPU_0, cpu1=backwards).cpu["idle"] == 0.0


def test_load_tasks_memory_psi_and_time():
    psi0 = {"cpu.some": 1000, "io.some": 10_000, "io.full": 5_000, "memory.some": 7, "memory.full": 7}
    psi1 = {"cpu.some": 1_001_000, "io.some": 510_000, "io.full": 205_000, "memory.some": 7, "memory.full": 3}
    sample = pair({}, {}, psi0=psi0, psi1=psi1)
    assert sample.load == (1.5, 1.0, 0.5) and sample.tasks == {"running": 3, "total": 200}
    assert sample.mem == {"total": 1000000.0, "memused": 750000.0, "avail": 250000.0, "dirty": 120.0,
                          "writeback": 30.0, "memused-percent": 75.0}
    # stalled 1 s, 0.5 s, 0.2 s of 2 s
    assert sample.psi == pytest.approx({"%scpu": 50.0, "%sio": 25.0, "%fio": 10.0, "%smem": 0.0, "%fmem": 0.0})
    assert sample.t == pytest.approx(1700000000.5 + (1002.0 - 999.5))
    old_kernel = pair({}, {}, mem={"MemTotal": 1000, "MemFree": 100, "Buffers": 50, "Cached": 250})
    assert old_kernel.mem["avail"] == 400.0 and old_kernel.mem["memused-percent"] == 60.0
    assert pair({}, {}).psi == {}


def test_first_snapshot_duplicates_and_reboots_give_nothing():
    computer = TelemetryComputer()
    first = snap(1, 100000, {"vda": VDA_0})
    assert computer.add(first) is None
    assert computer.add(first) is None                           # the same tick again
    assert computer.add(snap(2, 100100, {"vda": VDA_1})) is not None
    assert computer.add(snap(1, 500, {"vda": VDA_0})) is None   # rebooted: uptime went back
    assert computer.add(snap(2, 600, {"vda": VDA_1})).interval == 1.0


def test_through_the_parser_the_same_figures():
    def text(seq: int, uptime: str, counters: tuple) -> str:
        return (f"@tick {seq}\n@uptime\n{uptime} 1.00\n@stat\ncpu  1 2 3 4 5 6 7 8 0 0\n@diskstats\n"
                f" 254 0 vda {' '.join(map(str, counters))}\n@loadavg\n1.50 1.00 0.50 3/200 99\n"
                f"@meminfo\nMemTotal: 1000 kB\nMemAvailable: 500 kB\n@end {seq}\n")

    raw = ("@benchbay-telemetry 1\n@interval 2\n@clock 1700000000.5 999.50\n@disks vda\n@header-end\n"
           + text(1, "1000.00", VDA_0) + text(2, "1002.00", VDA_1))
    computer = TelemetryComputer()
    samples = [s for snapshot in RawTickParser().feed(raw.encode()) if (s := computer.add(snapshot))]
    assert len(samples) == 1 and samples[0].disks["vda"]["util"] == pytest.approx(75.0)


def test_series_round_trip():
    computer = TelemetryComputer()
    computer.add(snap(1, 100000, {"vda": VDA_0}, psi={"io.some": 0}))
    samples = [computer.add(snap(i, 100000 + 100 * i, {"vda": VDA_1}, psi={"io.some": 0})) for i in (2, 3)]
    t0 = samples[0].t - 1
    series = samples_to_series(samples, t0)
    names = {(s.name, s.device) for s in series}
    assert {("disk.util", "vda"), ("cpu.iowait", ""), ("load.1", ""), ("mem.dirty", ""), ("psi.%sio", ""),
            ("tasks.running", ""), ("interval", "")} <= names
    assert next(s for s in series if s.name == "disk.util").unit == "%"
    back = series_to_samples(series, t0)
    assert [b.t for b in back] == pytest.approx([s.t for s in samples])
    assert [(b.interval, b.cpu, b.load, b.tasks, b.disks, b.mem, b.psi) for b in back] == [
        (s.interval, s.cpu, s.load, s.tasks, s.disks, s.mem, s.psi) for s in samples]
