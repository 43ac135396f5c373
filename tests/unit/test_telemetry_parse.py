"""The sampler's raw output to Snapshots: incremental feeding, broken ticks and garbage never raise."""
from __future__ import annotations

import random

import pytest

from remote.telemetry.parse import RawTickParser, uptime_cs

HEADER = (
    "@benchbay-telemetry 1\n@interval 1\n@shell bash 5.2.15(1)-release\n@clock 1700000000.250000 999.50\n"
    "@disks loop0 vda sdb dm-0\n@dm dm-0 vg0-root\n@part vda1 vda\n@part vda2 vda\n@psi cpu io memory\n"
    "@header-end\n"
)
DISKSTATS_20 = " 254       0 vda 1000 10 80000 500 2000 40 160000 3000 0 1000 4000 5 0 64 7 30 8\n"
DISKSTATS_18 = "   8      16 sdb 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25\n"
DISKSTATS_14 = " 254       1 vda1 1 2 3 4 5 6 7 8 9 10 11\n"
DISKSTATS_7 = " 254       2 vda2 100 200 300 400\n"   # 2.6 partition line: no extended counters


def tick(seq: int, uptime: str = "1000.00", end: int | None = None, diskstats: str = DISKSTATS_20) -> str:
    return (
        f"@tick {seq}\n@uptime\n{uptime} 1900.00\n@stat\ncpu  1000 0 500 8000 100 10 40 50 200 0\n"
        f"@diskstats\n{diskstats}@loadavg\n0.39 0.57 0.41 2/143 8241\n"
        "@meminfo\nMemTotal:       1000000 kB\nMemAvailable:    250000 kB\nDirty:              12 kB\n"
        "Writeback:           3 kB\n"
        "@psi-cpu\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=1000\n"
        "@psi-io\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=2000\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=1500\n"
        f"@end {seq if end is None else end}\n"
    )


def stream(n: int = 3) -> bytes:
    return (HEADER + "".join(tick(i, f"{1000 + i}.00") for i in range(1, n + 1))).encode()


def test_a_tick_has_every_counter():
    parser = RawTickParser()
    (snap,) = parser.feed((HEADER + tick(1)).encode())
    assert snap.seq == 1 and snap.uptime_cs == 100000 and snap.uptime == 1000.0
    assert snap.cpu == {"user": 1000, "nice": 0, "system": 500, "idle": 8000, "iowait": 100, "irq": 10,
                        "softirq": 40, "steal": 50, "guest": 200, "guest_nice": 0}
    assert snap.disks["vda"] == (1000, 10, 80000, 500, 2000, 40, 160000, 3000, 0, 1000, 4000, 5, 0, 64, 7, 30, 8)
    assert snap.load == (0.39, 0.57, 0.41) and snap.tasks == (2, 143)
    assert snap.mem == {"MemTotal": 1000000, "MemAvailable": 250000, "Dirty": 12, "Writeback": 3}
    assert snap.psi == {"cpu.some": 1000, "io.some": 2000, "io.full": 1500}
    header = snap.header
    assert header.disks == {"loop0", "vda", "sdb", "dm-0"} and header.dm_names == {"dm-0": "vg0-root"}
    assert header.parents == {"vda1": "vda", "vda2": "vda"} and header.interval == 1.0
    assert snap.t == pytest.approx(1700000000.25 + 0.5)
    assert (parser.bad_ticks, parser.garbage_lines) == (0, 0)


def test_sysfs_names_with_a_slash():
    header = HEADER.replace("@disks loop0", "@disks cciss!c0d0 loop0")
    header = header.replace("@part vda2 vda", "@part cciss!c0d0p1 cciss!c0d0")
    (snap,) = RawTickParser().feed((header + tick(1)).encode())
    assert "cciss/c0d0" in snap.header.disks and snap.header.parents["cciss/c0d0p1"] == "cciss/c0d0"


def test_diskstats_lines_by_field_count():
    (snap,) = RawTickParser().feed((HEADER + tick(1, diskstats=DISKSTATS_20 + DISKSTATS_18 + DISKSTATS_14
                                                   + DISKSTATS_7)).encode())
    assert len(snap.disks["vda"]) == 17
    assert snap.disks["sdb"] == tuple(range(11, 26))
    assert snap.disks["vda1"] == tuple(range(1, 12))
    assert "vda2" not in snap.disks


def test_fed_byte_by_byte_gives_the_same_snapshots():
    data = stream(4)
    whole = RawTickParser().feed(data)
    parser = RawTickParser()
    pieces = [snap for i in range(len(data)) for snap in parser.feed(data[i:i + 1])]
    assert pieces == whole and [s.seq for s in pieces] == [1, 2, 3, 4]


def test_a_partial_tick_waits_for_the_rest():
    data = stream(2)
    cut = data.index(b"@meminfo", data.index(b"@tick 2"))
    parser = RawTickParser()
    assert [s.seq for s in parser.feed(data[:cut])] == [1]
    assert [s.seq for s in parser.feed(data[cut:])] == [2]
    assert parser.bad_ticks == 0


def test_utf8_split_across_chunks_and_garbage_lines_are_counted():
    data = (HEADER + tick(1) + "naïve garbage ünïcode €\n" + "\xff\n" + tick(2, "1001.00")).encode()
    data += b"\xc3\n"  # a lone UTF-8 lead byte
    chunked = RawTickParser()
    split_at = data.index("ï".encode()) + 1  # inside a two-byte character
    snaps = chunked.feed(data[:split_at]) + chunked.feed(data[split_at:])
    assert [s.seq for s in snaps] == [1, 2]
    assert chunked.garbage_lines == 3 and chunked.bad_ticks == 0


def test_truncated_tick_is_skipped_and_the_next_one_taken():
    data = (HEADER + tick(1) + tick(2, "1001.00").split("@meminfo")[0] + tick(3, "1002.00")).encode()
    parser = RawTickParser()
    assert [s.seq for s in parser.feed(data)] == [1, 3]
    assert parser.bad_ticks == 1


@pytest.mark.parametrize("broken", [
    tick(2, end=7),                                                       # ended by another number
    tick(2, uptime="12x.00"),                                             # unreadable uptime
    tick(2).replace("cpu  1000", "cpuX 1000"),                            # no aggregate cpu line
    tick(2).replace("0.39 0.57 0.41 2/143 8241", "nonsense"),             # unreadable loadavg
    tick(2).replace("@loadavg\n0.39 0.57 0.41 2/143 8241\n", ""),         # a required file missing
    tick(2).replace("MemTotal", "MemTutal"),
    "@tick two\n@uptime\n1000.00 1.00\n@end two\n",                       # unnumbered
])
def test_corrupt_ticks_are_skipped_and_counted(broken):
    parser = RawTickParser()
    snaps = parser.feed((HEADER + tick(1) + broken + tick(3, "1002.00")).encode())
    assert [s.seq for s in snaps] == [1, 3]
    assert parser.bad_ticks + parser.garbage_lines >= 1 and parser.last_error


def test_ticks_before_any_header_are_not_used():
    parser = RawTickParser()
    assert parser.feed((tick(1) + HEADER + tick(2, "1001.00")).encode())[0].seq == 2
    assert parser.bad_ticks == 1


def test_restarted_sampler_mid_tick_gives_a_new_header():
    second = HEADER.replace("1700000000.250000 999.50", "1700000100.000000 1099.00")
    data = (HEADER + tick(1) + tick(2).split("@diskstats")[0] + second + tick(1, "1100.00")).encode()
    parser = RawTickParser()
    snaps = parser.feed(data)
    assert [(s.seq, s.header.epoch) for s in snaps] == [(1, 1700000000.25), (1, 1700000100.0)]
    assert parser.bad_ticks == 1


def test_carriage_returns_separate_lines_too():
    data = (HEADER + tick(1)).replace("\n", "\r").encode() + b"\n"
    assert [s.seq for s in RawTickParser().feed(data)] == [1]


def test_random_bytes_never_raise():
    rng = random.Random(7)
    good = stream(3)
    for _ in range(200):
        data = bytearray(good)
        for _ in range(rng.randint(1, 20)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        parser = RawTickParser()
        pos = 0
        while pos < len(data):
            step = rng.randint(1, 300)
            parser.feed(bytes(data[pos:pos + step]))
            pos += step
    parser = RawTickParser()
    assert parser.feed(bytes(rng.randrange(256) for _ in range(100000))) == []


def test_endless_line_is_dropped():
    parser = RawTickParser()
    parser.feed(HEADER.encode() + b"@tick 1\n@uptime\n")
    parser.feed(b"x" * (2 << 20))
    assert parser.feed(b"\n@end 1\n" + tick(2, "1001.00").encode())[0].seq == 2
    assert parser.bad_ticks == 1 and parser.garbage_lines >= 1


def test_uptime_in_hundredths():
    assert uptime_cs("1046.65") == 104665 and uptime_cs("0.05") == 5 and uptime_cs("12") == 1200
    with pytest.raises(ValueError):
        uptime_cs("-1.00")
