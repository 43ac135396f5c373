"""How much data a dbload run makes (from the target's RAM or data=scale=N) and how long the run may take."""
from typing import Any, Dict  # noqa: F401 - some only in type comments

from . import dbload_redis
from .dbload_params import MB, resolved
from .dbload_pgbench import MB_PER_SCALE, DbLoadError
from .dbload_sysbench import BYTES_PER_ROW, TABLES

FITS_FRACTION = 0.25      # data: fits = a quarter of the target's RAM (room for the server's own memory)
RAM_FACTOR = 2.0          # data: 2xram


def expected_seconds(params: Dict[str, Any]) -> float:
    steps = len(params["clients"]) * (params["step_seconds"] + 15.0 + params["step_gap"])
    if params["wait_for_start"]:
        steps += params["start_wait"]
    full = resolved(params)
    if params["reuse_database"] or params["engine"] == "redis":
        data_mb = 0.0
    elif full.get("scale"):
        data_mb = full["scale"] * (MB_PER_SCALE if params["engine"] == "postgresql" else TABLES * BYTES_PER_ROW / MB)
    else:
        try:
            data_mb = data_bytes(full) / MB
        except (DbLoadError, OSError):
            data_mb = 64 * 1024.0   # the target's RAM is asked for when the run starts: room for a large one
    if params["engine"] == "redis":   # data=fits: up to dbload_redis.MAX_FITS_KEYS, written ~50,000 a second
        steps += (params["keyspace"] or full.get("scale") or dbload_redis.MAX_FITS_KEYS) / 50000.0
    return 120.0 + steps + data_mb / 5.0   # filling: a slow disk or link does 5 MB/s


def is_loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


def target_ram_mb(params: Dict[str, Any]) -> int:
    """The target's RAM: given, or this host's when the target is on this host."""
    if params["target_ram_mb"]:
        return params["target_ram_mb"]
    if is_loopback(params["host"]):
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) // 1024
    raise DbLoadError("dbload: data={} needs the target's RAM: give target_ram_mb=N (MB), or data=scale=N"
                      .format(params["data"]))


def data_bytes(params: Dict[str, Any]) -> float:
    ram = target_ram_mb(params) * float(MB)
    return ram * (FITS_FRACTION if params["data"] == "fits" else RAM_FACTOR)


def pg_scale(params: Dict[str, Any]) -> int:
    if params.get("scale"):
        return params["scale"]
    return max(1, int(data_bytes(params) / (MB_PER_SCALE * MB)))


def sysbench_table_size(params: Dict[str, Any]) -> int:
    if params.get("scale"):
        return params["scale"]
    return max(100, int(data_bytes(params) / (TABLES * BYTES_PER_ROW)))
