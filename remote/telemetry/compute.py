"""Two Snapshots -> one TelemetrySample, with the arithmetic of sysstat's `iostat -x` (12.x).

What iostat does, and so do we (iostat.c write_ext_stat / write_stats, common.c get_interval, ll_sp_value):
- the interval is the /proc/uptime delta in hundredths of a second (itv; 1 when it is 0), and a rate is
  S_VALUE = delta / itv * 100, in that order of operations, so values agree to the printed digit;
- rkB/s = S_VALUE(sectors) / 2, rareq-sz = delta sectors / delta reads / 2, r_await = delta ms / delta
  reads (0 without reads), aqu-sz = S_VALUE(weighted ms) / 1000, %util = S_VALUE(ms doing I/O) / 10;
- the millisecond counters are 32-bit (unsigned int in sysstat and in the kernel's output): their delta
  is taken modulo 2^32, so a wrap costs nothing;
- a device whose counters all dropped (fewer I/Os in total, and every non-zero sector count lower) was
  removed and added again: its figures are computed from zero, i.e. from what it did since it came back;
- a device that was not there on the previous tick (hot-plugged) starts from zero too: iostat gives a
  new device zeroed "previous" counters, and its counters did start at zero within the interval;
- CPU: T = delta of user+nice+system+idle+iowait+irq+softirq+steal (guest time is already inside user
  and nice, so it is not added again, and %user includes it, as iostat's avg-cpu does); %system is
  system+irq+softirq; a field that went backwards gives 0; T is an unsigned 64-bit difference, so when
  the total went back (a CPU taken offline drops its idle time from the sum) every field is ~0;
- by default the whole disks of /sys/block that have done any I/O since boot (iostat leaves out devices
  whose counters are all zero, such as unused loop devices, unless they are named); iostat reads
  /sys/block every tick, the sampler lists it once, so a device that came later counts as a whole disk
  unless its name makes it a partition of another.
The CPU figures are iostat's avg-cpu from the aggregate "cpu" line; mpstat's "all" line is summed from
the per-CPU lines instead, which the sampler does not keep.
Where iostat has no rule we choose: any other 64-bit counter that went backwards (iostat would print
huge nonsense) gives 0 figures for that interval. dm-N is shown by its dm name.
NFS mounts get nfsiostat's figures (nfs_compute) over the same interval; network filesystems are named.
"""
from __future__ import annotations

from collections.abc import Iterable

from remote.telemetry.nfs_compute import mount_label, nfs_figures
from remote.telemetry.parse import Header, Snapshot
from remote.telemetry.sample import TelemetrySample

_WRAP32 = 1 << 32
_WRAP64 = 1 << 64
# Indexes into the diskstats counters (after the device name): see Documentation/admin-guide/iostats.
RD_IOS, RD_MERGES, RD_SECT, RD_TICKS, WR_IOS, WR_MERGES, WR_SECT, WR_TICKS = range(8)
IOS_PGR, TOT_TICKS, RQ_TICKS = 8, 9, 10
DC_IOS, DC_SECT, FL_IOS = 11, 13, 15
_MS_FIELDS = frozenset({3, 7, 9, 10, 14, 16})   # rd/wr/tot/rq/discard/flush ticks: 32-bit
_GAUGES = frozenset({IOS_PGR})                  # I/Os in flight: a level, not a counter
_PSI_KEYS = {"cpu.some": "%scpu", "io.some": "%sio", "io.full": "%fio", "memory.some": "%smem",
             "memory.full": "%fmem"}


def _deltas(cur: tuple[int, ...], prev: tuple[int, ...]) -> list[int] | None:
    """Per-field deltas; from zero when the device was reset; None when a 64-bit counter went back
    otherwise."""
    if _was_reset(cur, prev):
        prev = (0,) * len(cur)
    out = []
    for i, (c, p) in enumerate(zip(cur, prev, strict=False)):
        if i in _MS_FIELDS:
            out.append((c - p) % _WRAP32)
        elif i in _GAUGES:
            out.append(c)
        elif c < p:
            return None
        else:
            out.append(c - p)
    return out + [0] * (17 - len(out))  # 14-field kernels: no discard/flush counters


def _was_reset(cur: tuple[int, ...], prev: tuple[int, ...]) -> bool:
    """iostat's test for "removed then inserted again": fewer I/Os in total than before, and each sector
    count that was not zero went down."""
    def field(counters: tuple[int, ...], i: int) -> int:
        return counters[i] if i < len(counters) else 0

    ios = (RD_IOS, WR_IOS, DC_IOS, FL_IOS)
    if sum(field(cur, i) for i in ios) >= sum(field(prev, i) for i in ios):
        return False
    return all(not field(prev, i) or field(cur, i) < field(prev, i) for i in (RD_SECT, WR_SECT, DC_SECT))


def _is_partition_name(name: str, others: Iterable[str]) -> bool:
    """A partition by the kernel's naming: disk name + number, or + "p" + number when the disk's name
    ends in a digit (nvme0n1p1, loop0p1, mmcblk0p2); so loop10 is not a partition of loop1."""
    for disk in others:
        if disk == name or not name.startswith(disk):
            continue
        rest = name[len(disk):]
        if disk[-1].isdigit():
            rest = rest[1:] if rest.startswith("p") else ""
        if rest.isdigit():
            return True
    return False


def disk_figures(d: list[int], itv: int) -> dict[str, float]:
    """iostat -x figures from counter deltas over itv hundredths of a second."""
    def rate(delta: int) -> float:
        return delta / itv * 100

    rd, wr = d[RD_IOS], d[WR_IOS]
    return {
        "r/s": rate(rd),
        "w/s": rate(wr),
        "rkB/s": rate(d[RD_SECT]) / 2,
        "wkB/s": rate(d[WR_SECT]) / 2,
        "rrqm/s": rate(d[RD_MERGES]),
        "wrqm/s": rate(d[WR_MERGES]),
        "r_await": d[RD_TICKS] / rd if rd else 0.0,
        "w_await": d[WR_TICKS] / wr if wr else 0.0,
        "rareq-sz": d[RD_SECT] / rd / 2 if rd else 0.0,
        "wareq-sz": d[WR_SECT] / wr / 2 if wr else 0.0,
        "aqu-sz": rate(d[RQ_TICKS]) / 1000.0,
        "util": rate(d[TOT_TICKS]) / 10.0,
    }


_ZERO_DISK = dict.fromkeys(disk_figures([0] * 17, 1), 0.0)


def cpu_figures(cur: dict[str, int], prev: dict[str, int]) -> dict[str, float]:
    """iostat's avg-cpu: percent of all CPU time in the interval."""
    def total(c: dict[str, int]) -> int:
        return sum(c[k] for k in ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"))

    # iostat's get_interval works in unsigned 64-bit: a total that went back (a CPU taken offline loses its
    # idle time from the sum) becomes a difference near 2^64, so every field prints 0.00, not thousands
    # of percent; a total that is unchanged counts as 1 tick.
    deltot = (total(cur) - total(prev)) % _WRAP64 or 1

    def pct(now: int, before: int) -> float:   # ll_sp_value: a counter that went back gives 0
        return 0.0 if before > now else (now - before) / deltot * 100

    return {
        "user": pct(cur["user"], prev["user"]),
        "nice": pct(cur["nice"], prev["nice"]),
        "system": pct(cur["system"] + cur["softirq"] + cur["irq"], prev["system"] + prev["softirq"] + prev["irq"]),
        "iowait": pct(cur["iowait"], prev["iowait"]),
        "steal": pct(cur["steal"], prev["steal"]),
        "idle": pct(cur["idle"], prev["idle"]),
    }


def mem_figures(mem: dict[str, int]) -> dict[str, float]:
    total = mem.get("MemTotal", 0)
    avail = mem.get("MemAvailable")
    if avail is None:  # kernels before 3.14: the old estimate
        avail = mem.get("MemFree", 0) + mem.get("Buffers", 0) + mem.get("Cached", 0)
    used = max(total - avail, 0)
    return {
        "total": float(total), "memused": float(used), "avail": float(avail),
        "dirty": float(mem.get("Dirty", 0)), "writeback": float(mem.get("Writeback", 0)),
        "memused-percent": used / total * 100 if total else 0.0,
    }


class TelemetryComputer:
    """Feed Snapshots in order; each one after the first gives a TelemetrySample.

    whole_disks_only=False shows every device of /proc/diskstats, partitions too, as `iostat -p ALL`
    does; `include` adds devices (kernel or display names, e.g. a partition) to the whole disks.
    """

    def __init__(self, whole_disks_only: bool = True, include: set[str] | None = None) -> None:
        self.whole_disks_only = whole_disks_only
        self.include = set(include or ())
        self._prev: Snapshot | None = None
        # The header lists /sys/block and the partitions as they were when the sampler started; a device
        # that is in neither came later (hot-plugged) and is judged by its name, once per header.
        self._header: Header | None = None
        self._late_disks: dict[str, bool] = {}

    def add(self, snap: Snapshot) -> TelemetrySample | None:
        if snap.header is not self._header:
            self._header, self._late_disks = snap.header, {}
        prev, self._prev = self._prev, snap
        if prev is None:
            return None
        itv = snap.uptime_cs - prev.uptime_cs
        if itv < 0:  # the host rebooted (or another sampler's output): start again from this one
            return None
        if itv == 0:
            if snap.seq == prev.seq:  # the same tick twice: keep the first
                self._prev = prev
                return None
            itv = 1  # as sysstat's get_interval
        return TelemetrySample(
            t=snap.t, interval=itv / 100, cpu=cpu_figures(snap.cpu, prev.cpu), load=snap.load,
            tasks={"running": snap.tasks[0], "total": snap.tasks[1]}, disks=self._disks(snap, prev, itv),
            mem=mem_figures(snap.mem), psi=self._psi(snap, prev, itv), nfs=self._nfs(snap, prev, itv),
            netfs={mount_label(m): fstype for m, fstype in snap.mounts.network.items()},
        )

    @staticmethod
    def _nfs(snap: Snapshot, prev: Snapshot, itv: int) -> dict[str, dict[str, float]]:
        before = prev.mounts.nfs
        return {mount_label(m): nfs_figures(mount, before.get(m), itv) for m, mount in snap.mounts.nfs.items()}

    def shows(self, name: str, counters: tuple[int, ...], snap: Snapshot) -> bool:
        header = snap.header
        if name in self.include or header.dm_names.get(name) in self.include:
            return True
        if not self.whole_disks_only:
            return True
        if name not in header.disks and not self._is_late_disk(name, snap):
            return False
        # never used since boot (unused loop devices, an empty CD drive): iostat leaves these out
        return any(counters[i] for i in (RD_IOS, WR_IOS, DC_IOS, FL_IOS) if i < len(counters))

    def _is_late_disk(self, name: str, snap: Snapshot) -> bool:
        """A device that appeared after the sampler started and is a whole disk, as far as its name says."""
        late = self._late_disks.get(name) if snap.header is self._header else None
        if late is None:
            late = (name not in snap.header.parents
                    and not _is_partition_name(name, snap.header.disks | snap.disks.keys()))
            if snap.header is self._header:
                self._late_disks[name] = late
        return late

    def _disks(self, snap: Snapshot, prev: Snapshot, itv: int) -> dict[str, dict[str, float]]:
        disks: dict[str, dict[str, float]] = {}
        for name, counters in snap.disks.items():
            if not self.shows(name, counters, snap):
                continue
            # not there on the previous tick: it appeared during the interval, with counters from zero
            before = prev.disks.get(name, (0,) * len(counters))
            deltas = _deltas(counters, before)
            label = snap.header.dm_names.get(name, name)
            disks[label] = dict(_ZERO_DISK) if deltas is None else disk_figures(deltas, itv)
        return disks

    @staticmethod
    def _psi(snap: Snapshot, prev: Snapshot, itv: int) -> dict[str, float]:
        # percent of the interval stalled: 100 * delta_us / (1e6 * itv / 100)
        psi: dict[str, float] = {}
        for key, name in _PSI_KEYS.items():
            if key in snap.psi and key in prev.psi:
                delta = snap.psi[key] - prev.psi[key]
                psi[name] = delta / itv / 100 if delta > 0 else 0.0
        return psi
