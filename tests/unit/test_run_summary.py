"""Readable summaries of hand-made results, as the CLI prints them and the window shows them."""
from __future__ import annotations

from app.run_summary import disk_sweep, disk_table, number, summary_text, version_differences
from storage.records import ResultSample

DISK_META = {"engine": "fio", "engine_version": "fio-3.33", "direct": True, "cached": False, "sync": "none"}


def _disk_job(name: str, iops: float, meta: dict | None = None) -> list[dict]:
    meta = meta or DISK_META
    figures = {"iops": iops, "mbps": iops * 4096 / 1e6, "lat_mean": 0.25, "lat_p50": 0.2, "lat_p95": 0.5,
               "lat_p99": 1.5, "lat_p99.9": 12.0}
    units = {"iops": "IOPS", "mbps": "MB/s"}
    return [{"test": "disk", "metric": f"{name}.{q}", "value": v, "unit": units.get(q, "ms"), "metadata": meta}
            for q, v in figures.items()]


def _cpu(single: float, multi: float, zlib_version: str = "1.2.13", python: str = "CPython 3.11.7") -> list:
    meta = {"python": python, "zlib": zlib_version, "openssl": "OpenSSL 3.0.11 19 Sep 2023", "cores": 8}
    results = [ResultSample("cpu", "single", single, "ops/s", {**meta, "workers": 1}),
               ResultSample("cpu", "multi", multi, "ops/s", {**meta, "workers": 8}),
               ResultSample("cpu", "scaling", multi / single, "x", {**meta, "workers": 8})]
    for phase, factor in (("single", 1), ("multi", 7)):
        results += [ResultSample("cpu", f"{phase}.zlib_compress", 40.5 * factor, "MB/s", meta),
                    ResultSample("cpu", f"{phase}.zlib_decompress", 310 * factor, "MB/s", meta),
                    ResultSample("cpu", f"{phase}.sha256", 1850 * factor, "MB/s", meta)]
    return results


def test_numbers_read_like_a_person_writes_them() -> None:
    assert [number(v) for v in (123456.7, 512.4, 48.24, 1.266, 0.0834, None)] == \
        ["123,457", "512", "48.2", "1.27", "0.083", "-"]


def test_disk_summary_one_row_per_job_with_engine_mode_and_sync() -> None:
    cached_sync = {**DISK_META, "engine": "builtin", "direct": False, "cached": True, "sync": "fdatasync"}
    results = (_disk_job("randread_4k", 41234.0) + _disk_job("syncwrite_4k", 812.0, cached_sync)
               + _disk_job("sweep_randread_4k_w16", 90000.0) + _disk_job("sweep_randread_4k_w1", 12000.0)
               + _disk_job("sweep_randread_4k_w4", 40000.0))
    text = summary_text("db1", "done", results, warnings=["file smaller than RAM"], run_id=7)
    lines = text.splitlines()
    assert lines[0] == "db1: done (run 7)"
    header = lines[1].split()
    assert header[:2] == ["job", "IOPS"] and "p99.9" in header and header[-3:] == ["engine", "I/O", "sync"]
    randread = lines[2].split()
    assert randread[:3] == ["randread_4k", "41,234", "169"]
    assert randread[-4:] == ["12.0", "fio", "direct", "-"]
    assert lines[3].split()[-3:] == ["builtin", "cached", "fdatasync"]
    assert not any(line.lstrip().startswith("sweep_") for line in lines)     # the sweep is one list
    assert "  sweep (workers: IOPS): 1: 12,000, 4: 40,000, 16: 90,000" in lines
    assert lines[-2:] == ["  warnings:", "  - file smaller than RAM"]
    # columns line up: every figure ends under the end of its header
    assert lines[2].index("fio") == lines[3].index("builtin") == lines[1].index("engine")
    assert lines[2].index("41,234") + len("41,234") == lines[1].index("IOPS") + len("IOPS")


def test_disk_table_and_sweep_take_stored_samples_too() -> None:
    samples = [ResultSample(**r) for r in _disk_job("sweep_randread_4k_w2", 20000.0) + _disk_job("seqread_1m", 300)]
    assert disk_sweep(samples) == [(2, 20000.0)]
    assert [row[0] for row in disk_table(samples).rows] == ["seqread_1m"]


def test_cpu_summary_scores_scaling_kernels_and_versions() -> None:
    text = summary_text("db1", "done", _cpu(12.5, 85.0), run_id=3)
    lines = text.splitlines()
    assert lines[1].split()[:4] == ["phase", "workers", "score", "ops/s"]
    assert lines[2].split() == ["single", "1", "12.5", "40.5", "310", "1,850"]
    assert lines[3].split() == ["multi", "8", "85.0", "284", "2,170", "12,950"]
    assert lines[4] == "  scaling: 6.80x (multi/single, 8 workers on 8 cores)"
    assert lines[5] == "  versions: interpreter CPython 3.11.7, zlib 1.2.13, OpenSSL 3.0.11 19 Sep 2023"


def test_failed_run_and_other_tests() -> None:
    assert summary_text("db2", "failed", [], error="cannot connect") == "db2: failed (not stored) — cannot connect"
    text = summary_text("local", "done", [{"test": "idle", "metric": "elapsed", "value": 4.5, "unit": "s"}], run_id=1)
    assert text.splitlines()[2].split() == ["idle", "elapsed", "4.5", "s"]


def test_version_differences_name_the_library_and_the_hosts() -> None:
    assert version_differences({"db1": _cpu(10, 40), "db2": _cpu(11, 44)}) == []
    lines = version_differences([("db1", _cpu(10, 40)), ("db2", _cpu(11, 44, zlib_version="1.3")),
                                 ("db3", _cpu(11, 44, python="CPython 3.9.2")), ("disk-only", _disk_job("a", 1))])
    assert lines == [
        "interpreter CPython 3.11.7 on db1, db2 vs CPython 3.9.2 on db3: CPU scores are not strictly comparable",
        "zlib 1.2.13 on db1, db3 vs 1.3 on db2: CPU scores are not strictly comparable",
    ]
