"""Two reads of an NFS mount's counters -> what `nfsiostat` prints for it.

The arithmetic is nfsiostat's (nfs-utils, tools/nfs-iostat/nfs-iostat.py: DeviceData.compare_iostats,
display_iostats and __print_rpc_op_stats), with t the interval in seconds:

- ops/s      = delta sends / t                       (the xprt line's RPC requests sent, every operation)
- rpc bklog  = (delta backlog / delta sends) / t     (0 without sends; divided by t as nfsiostat does)
- per operation (READ, WRITE), from its per-op counters:
  ops/s      = delta ops / t
  kB/s       = (delta bytes sent + delta bytes received) / 1024 / t
  kB/op      = (delta bytes sent + delta bytes received) / 1024 / delta ops
  retrans    = delta transmissions - delta ops, and as a percentage of delta ops
  avg RTT    = delta rtt ms / delta ops, avg exe = delta execute ms / delta ops,
  avg queue  = delta queue ms / delta ops
  errors     = delta errors, and as a percentage of delta ops (only where the kernel counts them, 5.3+)
  every per-op average is 0 when there were no ops (as nfsiostat "prevents floating point exceptions").

Where we differ, and why: t is the interval measured on the host's /proc/uptime (as for iostat's
figures), not the nominal sleep nfsiostat divides by; a mount that appeared during the interval, or was
mounted again (its age went back), counts from zero, as a hot-plugged disk does (nfsiostat shows such a
mount's totals since it was mounted); any other counter that went back gives zeros for that interval;
retransmissions below zero (an interval in which more operations completed than were sent, which
nfsiostat prints as a negative count) are 0.
"""
from __future__ import annotations

from remote.telemetry.mountstats import OP_FIELDS, NfsMount

OPS, TRANS, BYTES_SENT, BYTES_RECV, QUEUE, RTT, EXECUTE, ERRORS = 0, 1, 3, 4, 5, 6, 7, 8
SHOWN_OPS = (("READ", "read"), ("WRITE", "write"))
PER_OP_KEYS = ("ops_s", "kB_s", "kB_op", "retrans", "retrans_pct", "rtt_ms", "exe_ms", "queue_ms")
ERROR_KEYS = ("errors", "errors_pct")
NFS_KEYS = ("ops_s", "rpc_bklog") + tuple(f"{p}_{k}" for _, p in SHOWN_OPS for k in PER_OP_KEYS + ERROR_KEYS)
DEVICE_MAX = 200   # the store keeps a device name of up to 200 characters


def mount_label(mountpoint: str) -> str:
    """The mount point as the series' device: its end kept when it is too long for the store."""
    return mountpoint if len(mountpoint) <= DEVICE_MAX else "…" + mountpoint[-(DEVICE_MAX - 1):]


def _remounted(cur: NfsMount, prev: NfsMount) -> bool:
    return cur.age < prev.age or cur.export != prev.export or cur.fstype != prev.fstype


def op_figures(cur: tuple[int, ...], prev: tuple[int, ...], seconds: float) -> dict[str, float] | None:
    """One operation's nfsiostat figures; None when a counter went back."""
    d = [c - p for c, p in zip(cur, prev, strict=False)]
    if any(x < 0 for x in d):
        return None
    ops = d[OPS]
    kilobytes = (d[BYTES_SENT] + d[BYTES_RECV]) / 1024
    retrans = d[TRANS] - ops
    out = {
        "ops_s": ops / seconds,
        "kB_s": kilobytes / seconds,
        "kB_op": kilobytes / ops if ops else 0.0,
        "retrans": float(max(retrans, 0)),
        "retrans_pct": max(retrans, 0) * 100 / ops if ops else 0.0,
        "rtt_ms": d[RTT] / ops if ops else 0.0,
        "exe_ms": d[EXECUTE] / ops if ops else 0.0,
        "queue_ms": d[QUEUE] / ops if ops else 0.0,
    }
    if len(d) > ERRORS:
        out["errors"] = float(d[ERRORS])
        out["errors_pct"] = d[ERRORS] * 100 / ops if ops else 0.0
    return out


def nfs_figures(cur: NfsMount, prev: NfsMount | None, itv_cs: int) -> dict[str, float]:
    """nfsiostat's figures for one mount over itv_cs hundredths of a second (prev None: mounted since)."""
    seconds = max(itv_cs, 1) / 100
    zero_op = (0,) * len(OP_FIELDS)
    if prev is None or _remounted(cur, prev):
        prev = NfsMount(cur.mountpoint, cur.export, cur.fstype, 0, 0, 0, {})
    sends, backlog = cur.sends - prev.sends, cur.backlog - prev.backlog
    out: dict[str, float] = {"ops_s": 0.0, "rpc_bklog": 0.0}
    broken = sends < 0 or backlog < 0
    if not broken:
        out["ops_s"] = sends / seconds
        out["rpc_bklog"] = backlog / sends / seconds if sends else 0.0
    for op, prefix in SHOWN_OPS:
        counters = cur.ops.get(op)
        if counters is None:
            continue
        figures = None if broken else op_figures(counters, prev.ops.get(op, zero_op[:len(counters)]), seconds)
        if figures is None:   # a counter went back without a remount: nothing trustworthy this interval
            figures = dict.fromkeys(PER_OP_KEYS + (ERROR_KEYS if len(counters) > ERRORS else ()), 0.0)
            out["ops_s"] = out["rpc_bklog"] = 0.0
        out.update({f"{prefix}_{key}": value for key, value in figures.items()})
    return out
