"""The odd cases of real hosts, from constructed /proc text through the parser, against what sysstat 12.x
computes (iostat.c write_stats / write_ext_stat, common.c get_interval and ll_sp_value): a CPU taken
offline, CPU counters that go back or wrap, a device reset, hot-plugged and removed devices, 32-bit
millisecond counters that wrap. Each expected figure is worked out by hand from iostat's arithmetic."""
from __future__ import annotations

import pytest

from remote.telemetry.compute import TelemetryComputer
from remote.telemetry.parse import RawTickParser
from remote.telemetry.sample import TelemetrySample, samples_to_series, series_to_samples

HEADER = ("@benchbay-telemetry 1\n@interval 1\n@clock 1700000000.00 1000.00\n@disks vda loop1 zram0\n"
          "@part vda1 vda\n@header-end\n")
CPU = "cpu  1000 0 500 8000 100 10 40 50 200 0\ncpu0 500 0 250 4000 50 5 20 25 100 0\n"
U64 = 1 << 64
U32 = 1 << 32


def disk(name: str, *counters: int) -> str:
    """A 20-field /proc/diskstats line; missing counters are 0."""
    values = list(counters) + [0] * (17 - len(counters))
    return f" 254 0 {name} {' '.join(map(str, values))}\n"


def tick(seq: int, disks: str = "", cpu: str = CPU) -> str:
    uptime = f"{1000 + seq}.00"   # one second per tick: itv = 100
    return (f"@tick {seq}\n@uptime\n{uptime} 1.00\n@stat\n{cpu}@diskstats\n{disks}@loadavg\n"
            f"0.50 0.40 0.30 2/100 99\n@meminfo\nMemTotal: 1000 kB\nMemAvailable: 500 kB\n@end {seq}\n")


def samples(*ticks: str, computer: TelemetryComputer | None = None) -> list[TelemetrySample]:
    parser = RawTickParser()
    snapshots = parser.feed((HEADER + "".join(ticks)).encode())
    assert parser.bad_ticks == 0 and parser.garbage_lines == 0
    computer = computer or TelemetryComputer()
    return [s for snap in snapshots if (s := computer.add(snap)) is not None]


def printed(values: dict[str, float]) -> dict[str, str]:
    """As iostat prints them: %.2f."""
    return {key: f"{value:.2f}" for key, value in values.items()}


# -- CPU -------------------------------------------------------------------------------------------

def test_a_cpu_taken_offline_gives_0_00_not_thousands_of_percent():
    # cpu1 goes offline: its line goes, and the sum loses idle time it had counted (-800), while the
    # other CPU still worked (+30 user, +10 system). iostat: deltot = T1 - T0 in unsigned 64-bit, near
    # 2^64, so every ll_sp_value is ~0 and %idle (which went back) is 0: the line reads all 0.00.
    before = "cpu  1000 0 500 8000 100 10 40 50 0 0\ncpu0 500 0 250 4000 50 5 20 25 0 0\n"
    after = "cpu  1030 0 510 7200 100 10 40 50 0 0\ncpu0 1030 0 510 7200 100 10 40 50 0 0\n"
    (sample,) = samples(tick(1, cpu=before), tick(2, cpu=after))
    assert printed(sample.cpu) == dict.fromkeys(("user", "nice", "system", "iowait", "steal", "idle"), "0.00")
    assert max(sample.cpu.values()) < 1e-9


def test_one_cpu_field_going_back_gives_0_for_that_field_only():
    # iowait going backwards is a known NO_HZ quirk; ll_sp_value returns 0 for it, the rest is normal:
    # T = +60 user +20 system +930 idle -10 iowait = 1000
    before = "cpu  1000 0 500 8000 100 10 40 50 0 0\n"
    after = "cpu  1060 0 520 8930 90 10 40 50 0 0\n"
    (sample,) = samples(tick(1, cpu=before), tick(2, cpu=after))
    assert printed(sample.cpu) == {"user": "6.00", "nice": "0.00", "system": "2.00", "iowait": "0.00",
                                   "steal": "0.00", "idle": "93.00"}


def test_cpu_counters_that_wrap_at_64_bits():
    # the sum wraps with user: iostat's unsigned difference is still the real T = 50 + 950 = 1000, and
    # user itself (now < before) counts 0, as ll_sp_value does
    before = f"cpu  {U64 - 10} 0 500 8000 100 10 40 50 0 0\n"
    after = "cpu  40 0 500 8950 100 10 40 50 0 0\n"
    (sample,) = samples(tick(1, cpu=before), tick(2, cpu=after))
    assert printed(sample.cpu) == {"user": "0.00", "nice": "0.00", "system": "0.00", "iowait": "0.00",
                                   "steal": "0.00", "idle": "95.00"}


def test_guest_is_inside_user_and_old_kernels_have_no_steal():
    # guest +100 is part of user +300: T = 300 + 700 = 1000, not 1100
    with_guest = samples(tick(1, cpu="cpu  1000 0 0 1000 0 0 0 0 100 0\n"),
                         tick(2, cpu="cpu  1300 0 0 1700 0 0 0 0 200 0\n"))[0]
    assert printed(with_guest.cpu)["user"] == "30.00" and printed(with_guest.cpu)["idle"] == "70.00"
    # a 2.6.10 kernel's /proc/stat: 7 columns, no steal (0 for it)
    old = samples(tick(1, cpu="cpu  100 0 100 800 0 0 0\n"), tick(2, cpu="cpu  200 0 200 1400 0 0 0\n"))[0]
    assert printed(old.cpu) == {"user": "12.50", "nice": "0.00", "system": "12.50", "iowait": "0.00",
                                "steal": "0.00", "idle": "75.00"}


# -- devices ---------------------------------------------------------------------------------------

def test_a_reset_device_is_computed_from_zero():
    # removed and added again between ticks: every counter is lower. iostat (write_stats: "detect if
    # device has been removed then inserted again") takes zeros as the previous values.
    (sample,) = samples(tick(1, disk("vda", 1000, 0, 8000, 500, 2000, 0, 16000, 900, 0, 700, 1400)),
                        tick(2, disk("vda", 40, 0, 320, 30, 10, 0, 80, 5, 0, 25, 350)))
    assert printed(sample.disks["vda"]) == {
        "r/s": "40.00", "w/s": "10.00", "rkB/s": "160.00", "wkB/s": "40.00", "rrqm/s": "0.00", "wrqm/s": "0.00",
        "r_await": "0.75", "w_await": "0.50", "rareq-sz": "4.00", "wareq-sz": "4.00", "aqu-sz": "0.35",
        "util": "2.50"}


def test_a_device_reset_to_nothing_is_not_shown():
    # all its counters are 0 now: iostat leaves out a device without any I/O
    (sample,) = samples(tick(1, disk("vda", 1000, 0, 8000, 500)), tick(2, disk("vda")))
    assert sample.disks == {}


def test_a_device_that_drops_only_some_counters_gives_zeros():
    # fewer reads but more sectors: not iostat's reset pattern, and iostat would print values near 2^64
    # per second; a 64-bit counter never goes back otherwise, so this interval says 0
    (sample,) = samples(tick(1, disk("vda", 1000, 0, 8000, 500)), tick(2, disk("vda", 10, 0, 9000, 20)))
    assert set(sample.disks["vda"].values()) == {0.0}


def test_millisecond_counters_wrap_at_32_bits():
    # rd_ticks, wr_ticks, io_ticks and weighted ticks are unsigned int: +300, +200, +900, +1200 across 2^32
    first = disk("vda", 100, 0, 800, U32 - 100, 50, 0, 400, U32 - 50, 0, U32 - 400, U32 - 200)
    second = disk("vda", 200, 0, 1600, 200, 100, 0, 800, 150, 0, 500, 1000)
    (sample,) = samples(tick(1, first), tick(2, second))
    figures = printed(sample.disks["vda"])
    assert (figures["r_await"], figures["w_await"], figures["util"], figures["aqu-sz"]) == (
        "3.00", "4.00", "90.00", "1.20")


def test_a_hot_plugged_disk_is_shown_from_the_tick_it_appears():
    # sdb (and its partition sdb1) appear between ticks 1 and 2: iostat gives a new device zeroed previous
    # counters, so its first interval is what it did since it appeared; the partition is not a disk
    ticks = [tick(1, disk("vda", 100)),
             tick(2, disk("vda", 200) + disk("sdb", 16, 0, 128, 8) + disk("sdb1", 16, 0, 128, 8)),
             tick(3, disk("vda", 300) + disk("sdb", 48, 0, 384, 24) + disk("sdb1", 48, 0, 384, 24))]
    first, second = samples(*ticks)
    assert sorted(first.disks) == ["sdb", "vda"] and sorted(second.disks) == ["sdb", "vda"]
    assert printed(first.disks["sdb"])["r/s"] == "16.00" and printed(first.disks["sdb"])["rkB/s"] == "64.00"
    assert printed(second.disks["sdb"])["r/s"] == "32.00" and printed(second.disks["sdb"])["r_await"] == "0.50"
    # with partitions asked for (iostat -p ALL) the new partition is there too
    everything = samples(*ticks, computer=TelemetryComputer(whole_disks_only=False))
    assert sorted(everything[0].disks) == ["sdb", "sdb1", "vda"]


@pytest.mark.parametrize(("new", "shown"), [
    ("loop10", True),         # loop1 ends in a digit: its partitions are loop1p1, so loop10 is a disk
    ("loop1p1", False),
    ("vda2", False),          # a partition made after the start (partprobe)
    ("nvme0n1", True),
    ("dm-3", True),
    ("zram1", True),
])
def test_a_new_name_is_a_disk_unless_it_names_a_partition(new: str, shown: bool):
    ticks = [tick(1, disk("vda", 100)), tick(2, disk("vda", 200) + disk(new, 5))]
    assert (new in samples(*ticks)[0].disks) is shown


def test_a_removed_device_stops_and_one_that_comes_back_starts_from_zero():
    ticks = [tick(1, disk("vda", 100) + disk("zram0", 10)),
             tick(2, disk("vda", 200) + disk("zram0", 30)),
             tick(3, disk("vda", 300)),                       # zram0 removed
             tick(4, disk("vda", 400) + disk("zram0", 7))]    # and made again
    result = samples(*ticks)
    assert [sorted(s.disks) for s in result] == [["vda", "zram0"], ["vda"], ["vda", "zram0"]]
    assert [s.disks["zram0"]["r/s"] for s in (result[0], result[2])] == pytest.approx([20.0, 7.0])

    # stored: the device's series has just the intervals it was there for, and replays the same way
    t0 = result[0].t - 1
    series = {(s.name, s.device): s for s in samples_to_series(result, t0)}
    assert series[("disk.r/s", "zram0")].t == pytest.approx([1.0, 3.0])
    assert series[("disk.r/s", "vda")].t == pytest.approx([1.0, 2.0, 3.0])
    back = series_to_samples(series.values(), t0)
    assert [sorted(s.disks) for s in back] == [["vda", "zram0"], ["vda"], ["vda", "zram0"]]
