"""/proc/self/mountstats parsed: the NFS mounts' counters, and which mounts are network filesystems.

Every mount has a line "device SOURCE mounted on MOUNTPOINT with fstype TYPE" (fs/proc_namespace.c,
show_vfsstat; names escaped as in /proc/mounts, a space is \\040). An NFS mount adds "statvers=1.1" and
its own block (fs/nfs/super.c, nfs_show_stats; net/sunrpc/stats.c, rpc_clnt_show_stats):

    age:    SECONDS since mounted
    events: / bytes:                      page-cache counters (not used here)
    RPC iostats version: 1.1  p/v: 100003/4 (nfs)
    xprt:   tcp PORT BIND CONNECTS CONNECT_TIME IDLE SENDS RECVS BAD_XIDS REQ_U BKLOG_U ...
    per-op statistics
            READ: OPS TRANS TIMEOUTS BYTES_SENT BYTES_RECV QUEUE_MS RTT_MS EXECUTE_MS [ERRORS]

The xprt fields by transport are those nfsiostat (nfs-utils, tools/nfs-iostat/nfs-iostat.py,
DeviceData.__parse_rpc_line) reads: sends and backlog utilisation at words 7 and 11 for tcp, 4 and 8 for
udp, 7 and 10 for rdma. ERRORS is there since Linux 5.3 (per-op error counts). A mount with several
transports (nconnect) prints one xprt line each: here they are summed (nfsiostat keeps the last one;
with one transport, the default, both are the same). Nothing here raises on bad input: a line that does
not parse is left out.
"""
from __future__ import annotations

from dataclasses import dataclass, field

NFS_TYPES = frozenset({"nfs", "nfs4"})
# kernel network filesystems: they have no block device, and only NFS has counters in mountstats
KERNEL_NETWORK_TYPES = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "ceph", "9p", "afs", "ncpfs", "coda",
                                  "lustre", "gpfs", "beegfs", "glusterfs", "orangefs", "pvfs2", "davfs"})
# FUSE subtypes ("fuse.SUBTYPE") that reach a server over the network
NETWORK_FUSE_TYPES = frozenset({"sshfs", "s3fs", "rclone", "glusterfs", "ceph-fuse", "gcsfuse", "goofys", "davfs",
                                "curlftpfs", "juicefs", "mfs", "moosefs", "lizardfs", "cvmfs2", "seaweedfs",
                                "blobfuse", "blobfuse2", "mountpoint-s3", "objectivefs", "geesefs", "smbnetfs",
                                "fuse-nfs", "gluster", "beegfs", "weka"})
_XPRT_FIELDS = {"tcp": (7, 11), "udp": (4, 8), "rdma": (7, 10)}   # words index of sends, backlog utilisation
OP_FIELDS = ("ops", "trans", "timeouts", "bytes_sent", "bytes_recv", "queue", "rtt", "execute", "errors")
# the operations nfsiostat shows by default; the others (about 70 for NFSv4) are skipped unread: this
# runs for every tick of every host
KEPT_OPS = frozenset({"READ:", "WRITE:"})


@dataclass(frozen=True)
class NfsMount:
    """The counters of one NFS mount at one moment."""

    mountpoint: str
    export: str                 # server:/path
    fstype: str                 # nfs or nfs4
    age: int                    # seconds since mounted (a remount starts it again)
    sends: int                  # RPC requests sent, all transports
    backlog: int                # backlog queue utilisation, summed at each send (nfsiostat's "backlogutil")
    ops: dict[str, tuple[int, ...]] = field(default_factory=dict)   # READ, WRITE -> OP_FIELDS (8 or 9 counters)


@dataclass(frozen=True)
class MountTable:
    """What one read of mountstats says: the NFS mounts' counters, and every network filesystem's type."""

    nfs: dict[str, NfsMount] = field(default_factory=dict)
    network: dict[str, str] = field(default_factory=dict)   # mount point -> fstype, NFS included


def unescape(name: str) -> str:
    r"""The kernel's octal escapes (\040 space, \011 tab, \012 newline, \134 backslash) decoded."""
    if "\\" not in name:
        return name
    out, i = [], 0
    while i < len(name):
        chunk = name[i + 1:i + 4]
        if name[i] == "\\" and len(chunk) == 3 and all(c in "01234567" for c in chunk):
            out.append(chr(int(chunk, 8)))
            i += 4
        else:
            out.append(name[i])
            i += 1
    return "".join(out)


def is_network_fs(fstype: str, source: str) -> bool:
    """A filesystem served over the network: a kernel client, or a FUSE one that names a server."""
    if fstype in KERNEL_NETWORK_TYPES:
        return True
    if fstype.startswith("fuse."):
        sub = fstype[5:]
        # an unknown FUSE filesystem counts when its source names a server (user@host:path, scheme://)
        return sub in NETWORK_FUSE_TYPES or "://" in source or _names_host(source)
    if fstype == "fuse":   # old sshfs without a subtype: "sshfs#user@host:/path"
        return source.startswith("sshfs#") or _names_host(source)
    return False


def is_fuse(fstype: str) -> bool:
    return fstype == "fuse" or fstype.startswith("fuse.")


def _names_host(source: str) -> bool:
    host, colon, _ = source.partition(":")
    return bool(colon) and bool(host) and "/" not in host


def _device_line(line: str) -> tuple[str, str, str] | None:
    """'device SRC mounted on MNT with fstype T ...' -> (source, mount point, fstype)."""
    if not line.startswith("device "):
        return None
    source, found, rest = line[7:].partition(" mounted on ")
    mountpoint, found2, tail = rest.rpartition(" with fstype ")
    if not found or not found2 or not tail:
        return None
    return unescape(source), unescape(mountpoint), tail.split()[0]


def parse_mountstats(lines: list[str]) -> MountTable:
    table = MountTable()
    current: _NfsBuilder | None = None
    for raw in lines:
        device = _device_line(raw)
        if device is not None:
            if current is not None:
                current.finish(table)
            source, mountpoint, fstype = device
            current = _NfsBuilder(mountpoint, source, fstype) if fstype in NFS_TYPES else None
            if is_network_fs(fstype, source):
                table.network[mountpoint] = fstype
        elif current is not None:
            current.line(raw)
    if current is not None:
        current.finish(table)
    return table


class _NfsBuilder:
    def __init__(self, mountpoint: str, export: str, fstype: str) -> None:
        self.mountpoint, self.export, self.fstype = mountpoint, export, fstype
        self.age: int | None = None
        self.sends = self.backlog = 0
        self.xprts = 0
        self.in_ops = False
        self.ops: dict[str, tuple[int, ...]] = {}

    def line(self, raw: str) -> None:
        words = raw.split()
        if not words:
            return
        head = words[0]
        try:
            if head == "age:" and len(words) >= 2:
                self.age = int(words[1])
            elif head == "xprt:" and len(words) >= 2:
                where = _XPRT_FIELDS.get(words[1])
                if where is not None and len(words) > max(where):
                    self.sends += int(words[where[0]])
                    self.backlog += int(words[where[1]])
                    self.xprts += 1
            elif head == "per-op":
                self.in_ops = True
            elif self.in_ops and head in KEPT_OPS and len(words) >= 9:
                self.ops[head[:-1]] = tuple(int(w) for w in words[1:10])
        except ValueError:
            return   # a damaged line: left out

    def finish(self, table: MountTable) -> None:
        # without its age and a transport the block was cut short: no figures rather than wrong ones
        if self.age is None or not self.xprts:
            return
        table.nfs[self.mountpoint] = NfsMount(self.mountpoint, self.export, self.fstype, self.age, self.sends,
                                              self.backlog, self.ops)
