"""Host facts as short labelled lines, the way an admin reads them (CLI and report share it)."""
from __future__ import annotations

from collections.abc import Iterator

from remote.clock_offset import WARN_BEYOND, offset_words
from widgets.format import human_bytes


def _size(value: float | int | None, binary: bool = True) -> str:
    # "?" for an unknown size: these lines are read in a terminal and a plain-text report
    return human_bytes(value, binary=binary, missing="?")


def _tool(t: dict | None) -> str:
    if not t or not t.get("present"):
        return "not installed"
    kind = f"{t['type']} " if t.get("type") else ""
    return f"{kind}{t.get('version') or 'version unknown'}".strip()


def spec_line(facts: dict) -> str:
    """One line that says what the machine is: "AMD EPYC, 1s/2c/2t, 23.4 GiB RAM, vda 256 GiB SSD, kvm"."""
    cpu = facts.get("cpu") or {}
    mem = facts.get("memory") or {}
    disks = facts.get("disks") or []
    parts = [cpu.get("model") or "unknown CPU",
             f"{cpu.get('sockets', '?')}s/{cpu.get('cores', '?')}c/{cpu.get('threads', '?')}t",
             f"{_size(mem.get('total_bytes'))} RAM"]
    for d in disks[:3]:
        kind = "HDD" if d.get("rotational") else "SSD"
        parts.append(f"{d.get('name')} {_size(d.get('size_bytes'), binary=False)} {kind}")
    parts.append(facts.get("virtualization") or "bare metal?")
    return ", ".join(str(p) for p in parts)


def facts_lines(facts: dict) -> Iterator[str]:
    cpu = facts.get("cpu") or {}
    mem = facts.get("memory") or {}
    yield f"host:           {facts.get('hostname', '?')}  ({facts.get('os', '?')}, kernel {facts.get('kernel', '?')})"
    yield f"virtualization: {facts.get('virtualization', '?')}"
    yield f"python:         {facts.get('python', '?')}"
    mhz = f"{cpu['mhz']:.0f} MHz" if isinstance(cpu.get("mhz"), (int, float)) else "MHz ?"
    yield (f"cpu:            {cpu.get('model', '?')}; {cpu.get('sockets', '?')} socket(s), "
           f"{cpu.get('cores', '?')} cores, {cpu.get('threads', '?')} threads; {mhz}, "
           f"governor {cpu.get('governor') or 'n/a'}")
    yield (f"memory:         {_size(mem.get('total_bytes'))} RAM, "
           f"{_size(mem.get('available_bytes'))} available, swap {_size(mem.get('swap_total_bytes'))}")
    for d in facts.get("disks") or []:
        kind = "HDD" if d.get("rotational") else "SSD/virtual"
        name = d.get("dm_name") or d.get("name")
        yield (f"disk:           {name}: {d.get('model') or 'model ?'}, "
               f"{_size(d.get('size_bytes'), binary=False)}, {kind}, "
               f"scheduler {d.get('scheduler') or 'n/a'}, read-ahead {d.get('read_ahead_kb', '?')} KiB")
    td = facts.get("test_dir") or {}
    if td:
        direct = {True: "O_DIRECT ok", False: "no O_DIRECT", None: "O_DIRECT ?"}.get(td.get("o_direct"))
        yield (f"test dir:       {td.get('path')} on {td.get('device')} ({td.get('fstype')}, "
               f"{td.get('options')}), {_size(td.get('free_bytes'))} free, {direct}")
    raid = facts.get("raid") or {}
    arrays = raid.get("arrays") or []
    yield "raid:           " + (", ".join(f"{a.get('name')} {a.get('level')} {a.get('status', '')}".strip()
                                          for a in arrays) or "no md arrays")
    tools = facts.get("tools") or {}
    for name in ("fio", "mta", "postgresql", "iostat", "dnsperf"):
        yield f"{name + ':':<16}{_tool(tools.get(name))}"
    clock = facts.get("clock") or {}
    offset = clock.get("offset_s") if isinstance(clock, dict) else None
    if isinstance(offset, (int, float)) and not isinstance(offset, bool):
        if abs(offset) > WARN_BEYOND:
            yield f"clock:          WARNING: {offset_words(offset)} this computer's (times are stored on this one's)"
        else:
            yield f"clock:          within {WARN_BEYOND:g} s of this computer's ({offset:+.3f} s)"
    if facts.get("needs_root"):
        yield "needs root:     " + ", ".join(facts["needs_root"])
    for err in facts.get("errors") or []:
        yield f"not gathered:   {err}"
