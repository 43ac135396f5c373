"""The sampler's raw output (samples.raw) turned into Snapshots of counters, fed incrementally.

Format (sampler.sh): a header once, then framed ticks; lines end with "\\n" (the bash sampler may use
"\\r" inside a tick instead, both are line ends here):

    @benchbay-telemetry 1 / @interval S / @shell NAME / @clock EPOCH UPTIME / @disks vda sdb ...
    @dm dm-0 vg-root / @part vda1 vda / @psi cpu io memory / @header-end
    @tick N / @uptime / ... / @stat / cpu ... / @diskstats / ... / @loadavg / @meminfo / @psi-io / @mountstats / @end N

Reads from a growing file can stop anywhere: a partial line or tick waits for the rest. A tick that is
broken (no end, wrong end, unreadable counters, no header before it) is skipped and counted; garbage
between ticks is counted too. Nothing here raises on bad input.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from remote.telemetry.mountstats import MountTable, parse_mountstats

FORMAT_VERSION = 1
_MAX_LINE = 1 << 20            # a "line" longer than this is garbage (never produced by the sampler)
_MAX_TICK_LINES = 100_000      # ditto for a tick: thousands of disks are fine, endless input is not
_CPU_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal", "guest", "guest_nice")
_REQUIRED = ("uptime", "stat", "diskstats", "loadavg", "meminfo")


@dataclass(frozen=True)
class Header:
    version: int
    interval: float
    epoch: float                        # host wall clock ...
    uptime: float                       # ... at this host uptime: t = epoch + (uptime_now - uptime)
    shell: str = ""
    disks: frozenset[str] = frozenset()  # whole disks (/sys/block)
    dm_names: dict[str, str] = field(default_factory=dict)   # dm-0 -> vg0-root
    parents: dict[str, str] = field(default_factory=dict)    # vda1 -> vda
    psi: tuple[str, ...] = ()


@dataclass
class Snapshot:
    """The counters of one tick, as the kernel gave them."""

    seq: int
    uptime_cs: int                      # /proc/uptime in 1/100 s, as sysstat reads it
    cpu: dict[str, int]                 # the aggregate "cpu" line of /proc/stat, in ticks (_CPU_FIELDS)
    disks: dict[str, tuple[int, ...]]   # /proc/diskstats: name -> the 11, 15 or 17 counters after the name
    load: tuple[float, float, float]
    tasks: tuple[int, int]              # running, total (/proc/loadavg)
    mem: dict[str, int]                 # /proc/meminfo, kB (or pages for HugePages_*)
    psi: dict[str, int]                 # "io.some" -> total stall time in microseconds
    header: Header
    mounts: MountTable = field(default_factory=MountTable)   # /proc/self/mountstats: NFS, network filesystems

    @property
    def uptime(self) -> float:
        return self.uptime_cs / 100

    @property
    def t(self) -> float:
        """Host epoch seconds of this tick."""
        return self.header.epoch + (self.uptime - self.header.uptime)


def uptime_cs(text: str) -> int:
    """'1046.65' -> 104665, like sysstat's read_uptime (seconds and hundredths as integers)."""
    whole, _, frac = text.partition(".")
    if not whole.isdigit() or (frac and not frac.isdigit()):
        raise ValueError(f"not an uptime: {text!r}")
    return int(whole) * 100 + int((frac + "00")[:2])


class RawTickParser:
    def __init__(self) -> None:
        self._buf = b""
        self.header: Header | None = None
        self.bad_ticks = 0
        self.garbage_lines = 0
        self.last_error = ""
        self._hdr: _HeaderLines | None = None
        self._tick_seq: int | None = None
        self._sections: dict[str, list[str]] = {}
        self._section: list[str] | None = None
        self._tick_lines = 0
        self._tick_broken = False

    def feed(self, data: bytes) -> list[Snapshot]:
        out: list[Snapshot] = []
        buf = self._buf + data
        cut = max(buf.rfind(b"\n"), buf.rfind(b"\r"))
        if cut < 0:
            if len(buf) > _MAX_LINE:
                self._garbage("overlong line")
                self._break_tick()
                buf = b""
            self._buf = buf
            return out
        self._buf = buf[cut + 1:]
        for raw in buf[:cut].replace(b"\r", b"\n").split(b"\n"):
            if raw:
                snap = self._line(raw.decode("utf-8", "replace"))
                if snap is not None:
                    out.append(snap)
        return out

    # -- line handling ------------------------------------------------------------------------------

    def _line(self, line: str) -> Snapshot | None:
        if line.startswith("@"):
            word, _, rest = line[1:].partition(" ")
            if word == "tick":
                self._start_tick(rest)
            elif word == "end":
                return self._end_tick(rest)
            elif word == "benchbay-telemetry":
                if self._tick_seq is not None:  # the sampler was stopped mid-tick and started again
                    self._tick_seq = None
                    self._bad("tick without end")
                self._hdr = _HeaderLines(rest.strip())
            elif self._tick_seq is not None:
                self._section = self._sections.setdefault(word, [])
            elif self._hdr is not None:
                self._header_line(word, rest)
            else:
                self._garbage("marker outside a tick")
            return None
        if self._tick_seq is None:
            self._garbage("text outside a tick")
        elif self._section is None or self._tick_lines >= _MAX_TICK_LINES:
            self._break_tick()   # the rest of a broken tick goes with it, counted once at its end
        else:
            self._tick_lines += 1
            self._section.append(line)
        return None

    def _header_line(self, word: str, rest: str) -> None:
        hdr = self._hdr
        assert hdr is not None
        args = rest.split()
        if word == "header-end":
            self._hdr = None
            try:
                self.header = hdr.finish()
            except (KeyError, ValueError, IndexError) as exc:
                self._garbage(f"unusable header: {exc}")
        elif word in ("interval", "shell") or (word == "clock" and len(args) >= 2):
            hdr.fields[word] = rest.strip()
        elif word == "disks":   # /sys/block spells a slash in a name as "!" (cciss!c0d0 = cciss/c0d0)
            hdr.disks = [name.replace("!", "/") for name in args]
        elif word == "psi":
            hdr.psi = args
        elif word == "dm" and len(args) >= 2:
            hdr.dm_names[args[0]] = " ".join(args[1:])
        elif word == "part" and len(args) >= 2:
            hdr.parents[args[0].replace("!", "/")] = args[1].replace("!", "/")
        else:
            self._garbage(f"unknown header line @{word}")

    def _start_tick(self, rest: str) -> None:
        if self._tick_seq is not None:
            self._bad("tick without end")
        self._hdr = None
        self._sections = {}
        self._section = None
        self._tick_lines = 0
        self._tick_broken = False
        try:
            self._tick_seq = int(rest)
        except ValueError:
            self._tick_seq = None
            self._bad("unnumbered tick")

    def _end_tick(self, rest: str) -> Snapshot | None:
        seq, sections, broken = self._tick_seq, self._sections, self._tick_broken
        self._tick_seq, self._sections, self._section = None, {}, None
        if seq is None:
            self._garbage("end without tick")
            return None
        if broken or rest.strip() != str(seq):
            self._bad("tick broken or ended by another number")
            return None
        if self.header is None:
            self._bad("tick before any header")
            return None
        try:
            return _snapshot(seq, sections, self.header)
        except (ValueError, IndexError, KeyError) as exc:
            self._bad(f"tick {seq}: {exc}")
            return None

    def _break_tick(self) -> None:
        if self._tick_seq is not None:
            self._tick_broken = True
            self._section = None

    def _bad(self, why: str) -> None:
        self.bad_ticks += 1
        self.last_error = why

    def _garbage(self, why: str) -> None:
        self.garbage_lines += 1
        self.last_error = why


@dataclass
class _HeaderLines:
    version: str
    fields: dict[str, str] = field(default_factory=dict)
    disks: list[str] = field(default_factory=list)
    psi: list[str] = field(default_factory=list)
    dm_names: dict[str, str] = field(default_factory=dict)
    parents: dict[str, str] = field(default_factory=dict)

    def finish(self) -> Header:
        epoch, up = self.fields["clock"].split()[:2]
        return Header(
            version=int(self.version), interval=float(self.fields.get("interval", "0")), epoch=float(epoch),
            uptime=float(up), shell=self.fields.get("shell", ""), disks=frozenset(self.disks),
            dm_names=dict(self.dm_names), parents=dict(self.parents), psi=tuple(self.psi),
        )


# -- section parsers -------------------------------------------------------------------------------

def _snapshot(seq: int, sections: dict[str, list[str]], header: Header) -> Snapshot:
    missing = [name for name in _REQUIRED if name not in sections]
    if missing:
        raise ValueError(f"missing {', '.join(missing)}")
    load, tasks = _loadavg(sections["loadavg"])
    return Snapshot(
        seq=seq, uptime_cs=uptime_cs(sections["uptime"][0].split()[0]), cpu=_cpu(sections["stat"]),
        disks=_diskstats(sections["diskstats"]), load=load, tasks=tasks, mem=_meminfo(sections["meminfo"]),
        psi=_psi(sections), header=header, mounts=parse_mountstats(sections.get("mountstats", [])),
    )


def _cpu(lines: list[str]) -> dict[str, int]:
    for line in lines:
        if line.startswith("cpu "):
            values = [int(v) for v in line.split()[1:]]
            if len(values) < 4:
                break
            values += [0] * (len(_CPU_FIELDS) - len(values))  # old kernels: no steal/guest columns
            return dict(zip(_CPU_FIELDS, values[: len(_CPU_FIELDS)], strict=True))
    raise ValueError("no aggregate cpu line in /proc/stat")


def _diskstats(lines: list[str]) -> dict[str, tuple[int, ...]]:
    disks: dict[str, tuple[int, ...]] = {}
    for line in lines:
        parts = line.split()
        # 14 fields up to 4.18, 18 with discards (4.18), 20 with flushes (5.5); 7-field partition lines of
        # 2.6 kernels have no extended counters and are left out, as iostat -x does.
        if len(parts) in (14, 18, 20):
            try:
                disks[parts[2]] = tuple(int(v) for v in parts[3:])
            except ValueError:
                continue
    return disks


def _loadavg(lines: list[str]) -> tuple[tuple[float, float, float], tuple[int, int]]:
    parts = lines[0].split()
    running, _, total = parts[3].partition("/")
    return (float(parts[0]), float(parts[1]), float(parts[2])), (int(running), int(total))


def _meminfo(lines: list[str]) -> dict[str, int]:
    mem: dict[str, int] = {}
    for line in lines:
        key, _, rest = line.partition(":")
        value = rest.split()
        if value and value[0].isdigit():
            mem[key.strip()] = int(value[0])
    if "MemTotal" not in mem:
        raise ValueError("no MemTotal in /proc/meminfo")
    return mem


def _psi(sections: dict[str, list[str]]) -> dict[str, int]:
    psi: dict[str, int] = {}
    for name, lines in sections.items():
        if not name.startswith("psi-"):
            continue
        for line in lines:
            kind, *pairs = line.split()
            for pair in pairs:
                key, _, value = pair.partition("=")
                if key == "total" and value.isdigit():
                    psi[f"{name[4:]}.{kind}"] = int(value)
    return psi
