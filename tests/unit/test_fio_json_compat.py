"""fio's JSON across versions: what a user reads as MB/s and latency must not depend on the host's fio.

fio 3.1 (Ubuntu 18.04) has no bw_bytes, only bw in KiB/s (fio's documented unit, 1024 B/s); bw_bytes
came with fio 3.2. Before fio 3.0, latencies are in "clat" in microseconds instead of "clat_ns".
The documents below have the shape of those versions' output, trimmed to the fields read.
"""
from __future__ import annotations

import json

import pytest

from remote.agent import disk_fio

JOB = {"name": "randread_4k", "rw": "randread", "bs": 4096, "file": "/data/benchbay-disk-0a1b.dat",
       "size": 1 << 24, "workers": 1, "runtime": 5.0, "warmup": 1.0, "direct": True, "sync": "none"}
PERCENTILES_NS = {"50.000000": 181248, "95.000000": 240640, "99.000000": 301056, "99.900000": 1253376}


def _doc(version: str, side: dict) -> str:
    empty = {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    return json.dumps({"fio version": version, "jobs": [{"jobname": "randread_4k", "read": side,
                                                         "write": empty, "trim": empty}]})


def _fio_31_side() -> dict:
    # fio 3.1: clat_ns (3.0+) but bandwidth only as "bw", in KiB/s
    return {"io_bytes": 109051904, "io_kbytes": 106496, "bw": 21299, "iops": 5324.9, "runtime": 5000,
            "total_ios": 26624, "clat_ns": {"mean": 185000.5, "percentile": PERCENTILES_NS}}


def test_fio_3_1_without_bw_bytes_reads_bw_as_kib_per_second() -> None:
    result = disk_fio.parse(JOB, _doc("fio-3.1", _fio_31_side()), True, "fio ...")
    assert result["mbps"] == pytest.approx(21299 * 1024 / 1e6)      # 21.8 MB/s, not 0.0
    assert result["iops"] == pytest.approx(5324.9) and result["ios"] == 26624
    assert result["lat"]["p50"] == pytest.approx(0.181248) and result["lat"]["p99.9"] == pytest.approx(1.253376)
    assert result["engine_version"] == "fio-3.1"


def test_fio_3_2_and_later_use_bw_bytes() -> None:
    side = dict(_fio_31_side(), bw_bytes=21810000)   # bw_bytes wins over the rounded KiB figure
    assert disk_fio.parse(JOB, _doc("fio-3.33", side), True, "fio ...")["mbps"] == pytest.approx(21.81)


def test_fio_2_latencies_in_microseconds() -> None:
    side = {"io_bytes": 106496, "bw": 21299, "iops": 5324.9, "runtime": 5000,
            "clat": {"mean": 185.0, "percentile": {k: v // 1000 for k, v in PERCENTILES_NS.items()}}}
    result = disk_fio.parse(JOB, _doc("fio-2.2.10", side), True, "fio ...")
    assert result["lat"]["mean"] == pytest.approx(0.185) and result["lat"]["p95"] == pytest.approx(0.24)
    assert result["ios"] == 26624                    # no total_ios: iops x runtime
    assert result["mbps"] == pytest.approx(21299 * 1024 / 1e6)


def test_the_write_side_is_read_for_write_jobs() -> None:
    empty = {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0}
    doc = json.dumps({"fio version": "fio-3.1", "jobs": [{"read": empty, "write": _fio_31_side()}]})
    result = disk_fio.parse(dict(JOB, rw="randwrite", name="syncwrite_4k"), doc, True, "fio ...")
    assert result["mbps"] > 21 and result["iops"] > 5000


def test_fio_is_given_a_name_its_option_parser_keeps() -> None:
    # ':' separates files for fio, ';' and '#' start a comment: fio runs in the directory instead
    job = dict(JOB, file="/srv/a:b;c #d/benchbay-disk-0a1b.dat")
    argv = disk_fio.command(job, True)
    assert "--filename=benchbay-disk-0a1b.dat" in argv
    assert disk_fio.fio_cwd(job) == "/srv/a:b;c #d"
    with pytest.raises(ValueError, match="file name"):
        disk_fio.command(dict(JOB, file="/srv/x:y.dat"), True)
