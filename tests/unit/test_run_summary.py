"""Readable summaries of hand-made results, as the CLI prints them and the window shows them."""
from __future__ import annotations

from app.summary.base import number
from app.summary.disk_cpu import disk_sweep, disk_table, version_differences
from app.summary.text import caveats, summary_text
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


MAIL_META = {"synthetic": False, "server": "127.0.0.1:25", "recipient": "sink@benchbay.invalid", "messages": 2000,
             "concurrency": 20, "size": 4096, "mta": "postfix", "mta_version": "3.7.11",
             "queue_dir": "/var/spool/postfix", "queue_tool": "postqueue -j",
             "queue_fs": {"path": "/var/spool/postfix", "mount": "/", "fstype": "ext4", "source": "/dev/vda"}}
PG_META = {"kind": "postgresql", "server_version": "15.20 (Debian 15.20-0+deb12u1)", "fsync": "on",
           "synchronous_commit": "on", "wal_level": "replica", "maintenance_work_mem": "64MB",
           "shared_buffers": "128MB", "durable": True, "size_mb": 16, "rows": 81055, "dump_bytes": 5127206}


def _mail(accepted: int = 2000, by_stage: dict | None = None, **meta: object) -> list[dict]:
    base = {**MAIL_META, **meta}
    fail = {**base, "by_stage": by_stage or {}, "last_error": ""}
    out = [{"test": "mailstorm", "metric": "accepted", "value": accepted, "unit": "messages",
            "metadata": {**base, "attempted": 2000}},
           {"test": "mailstorm", "metric": "accepted_per_s", "value": 485.12, "unit": "msg/s",
            "metadata": {**base, "window_s": 4.1227}}]
    out += [{"test": "mailstorm", "metric": m, "value": sum(k.get(kind, 0) for k in (by_stage or {}).values()),
             "unit": "", "metadata": fail}
            for m, kind in (("refused_tcp", "refused"), ("smtp_4xx", "4xx"), ("smtp_5xx", "5xx"))]
    for prefix, scale in (("connect", 0.1), ("banner", 250.0), ("data", 9.0)):
        out += [{"test": "mailstorm", "metric": f"{prefix}_{p}", "value": scale * f, "unit": "ms", "metadata": base}
                for p, f in (("p50", 1), ("p95", 2), ("p99", 3), ("max", 4))]
    queue = {**base, "poll_s": 5.0, "series": [[0.0, 0], [5.0, 12]]}
    out += [{"test": "mailstorm", "metric": "queue_max", "value": 12, "unit": "messages", "metadata": queue},
            {"test": "mailstorm", "metric": "drain_s", "value": 0.853, "unit": "s", "metadata": queue}]
    return out


def _restore(fsync: str = "on") -> list[dict]:
    meta = {**PG_META, "fsync": fsync, "durable": fsync == "on"}
    out = [{"test": "restore", "metric": "dump_bytes", "value": 5127206, "unit": "B",
            "metadata": {**meta, "dump_s": 0.403}},
           {"test": "restore", "metric": "source_db_bytes", "value": 22979075, "unit": "B", "metadata": meta},
           {"test": "restore", "metric": "db_bytes", "value": 22953319, "unit": "B", "metadata": meta}]
    for metric, jobs, total in (("restore_j1", 1, 2.94), ("restore_jN", 8, 1.47)):
        pass_meta = {**meta, "jobs": jobs}
        figures = {"pre_data_s": 0.04, "data_s": total / 2, "post_data_s": total / 2 - 0.04, "total_s": total,
                   "mbps_dump": 5127206 / 1048576 / total, "mbps_db": 22953319 / 1048576 / total,
                   "rows_per_s": 81055 / total}
        out += [{"test": "restore", "metric": f"{metric}.{k}", "value": v, "unit": "", "metadata": pass_meta}
                for k, v in figures.items()]
    return out


def test_mail_storm_summary_counts_rates_latency_queue_and_mta() -> None:
    text = summary_text("mx1", "done", _mail(), run_id=4)
    assert "other" not in text and "accepted_per_s" not in text   # not the generic metric table
    lines = [line.strip() for line in text.splitlines()]
    assert "accepted: 2,000 / 2,000 attempted (2,000 asked, 20 sessions, 4,096 B each)" in lines
    assert "accepted msg/s: 485 (first attempt to last accept, 4.12 s)" in lines
    assert "MTA: postfix 3.7.11 on 127.0.0.1:25, recipient sink@benchbay.invalid" in lines
    assert "queue directory: /var/spool/postfix (ext4 on /dev/vda, mounted at /)" in lines
    assert "queue: max 12 messages, drained 0.853 s after the last accept (polled every 5 s with postqueue -j)" \
        in lines
    assert "refusals: none" in lines
    header = lines.index("stage        p50 ms  p95 ms  p99 ms  max ms")
    assert [line.split()[0] for line in lines[header + 1:header + 4]] == ["connect", "banner", "end"]
    assert lines[header + 2].split() == ["banner", "250", "500", "750", "1,000"]
    assert "SYNTHETIC" not in text and caveats(_mail()) == []


def test_refusals_by_stage_and_missing_accepts_are_caveats() -> None:
    results = _mail(accepted=1950, by_stage={"connect": {"refused": 30}, "rcpt": {"4xx": 15, "5xx": 5}})
    text = summary_text("mx1", "done", results, run_id=5)
    assert "  refusals: connect: 30 refused; RCPT TO: 15 4xx, 5 5xx" in text.splitlines()
    assert caveats(results) == ["Not all messages accepted: 1,950 of 2,000."]


def test_synthetic_storm_is_labelled_in_text_and_caveats() -> None:
    meta = {"synthetic": True, "server": "127.0.0.1:25", "reason": "Connection refused", "messages": 2000,
            "concurrency": 20, "size": 4096, "directory": "/srv/test",
            "fs": {"fstype": "xfs", "source": "/dev/sdb1", "mount": "/srv"},
            "op": "create, write, fsync, rename, unlink per message"}
    results = [{"test": "mailstorm", "metric": "accepted", "value": 2000, "unit": "messages", "metadata": meta},
               {"test": "mailstorm", "metric": "accepted_per_s", "value": 4329.4, "unit": "msg/s",
                "metadata": {**meta, "window_s": 0.462}}]
    results += [{"test": "mailstorm", "metric": f"synthetic_fsync_{p}", "value": v, "unit": "ms", "metadata": meta}
                for p, v in (("p50", 1.0), ("p95", 3.4), ("p99", 4.5), ("max", 6.2))]
    lines = summary_text("mx1", "done", results, run_id=6).splitlines()
    assert lines[1].startswith("  SYNTHETIC queue storm (no MTA): Connection refused on 127.0.0.1:25")
    assert "  directory: /srv/test (xfs on /dev/sdb1, mounted at /srv)" in lines
    assert lines[-1].split() == ["fsync", "1.00", "3.40", "4.50", "6.20"]
    assert not any(line.strip().startswith("MTA") for line in lines)
    assert caveats(results)[0].startswith("SYNTHETIC queue storm (no MTA): no MTA answered on 127.0.0.1:25")


def test_restore_summary_one_row_per_pass_with_settings_and_denominators() -> None:
    lines = summary_text("db1", "done", _restore(), run_id=8).splitlines()
    assert lines[1] == ("  PostgreSQL 15.20 (Debian 15.20-0+deb12u1): fsync on, synchronous_commit on, "
                        "wal_level replica, maintenance_work_mem 64MB, shared_buffers 128MB")
    assert lines[2] == ("  dump (pg_dump -Fc): 4.89 MB in 0.403 s; source database 21.9 MB; restored database "
                        "21.9 MB; 81,055 rows")
    assert "MB/s (dump) = dump bytes / total s; MB/s (db size) = restored database size / total s" in lines[3]
    # one timed operation: no spread within the run, and the summary says where one comes from
    assert lines[4].startswith("  Spread: from repeats only: a restore is one timed operation")
    assert "--repeat" in lines[4]
    assert lines[5].split() == ["pass", "pre-data", "s", "data", "s", "post-data", "s", "total", "s", "MB/s",
                                "(dump)", "MB/s", "(db", "size)", "rows/s"]
    assert lines[6].split() == ["-j", "1", "0.040", "1.47", "1.43", "2.94", "1.66", "7.45", "27,570"]
    assert lines[7].split()[:2] == ["-j", "8"] and lines[7].split()[5] == "1.47"
    assert caveats(_restore()) == [] and "NON-DURABLE" not in "\n".join(lines)


def test_non_durable_and_file_level_restores_are_labelled() -> None:
    text = summary_text("db1", "done", _restore(fsync="off"), run_id=9)
    assert "  NON-DURABLE (fsync off): the server does not flush to disk" in text.splitlines()
    assert caveats(_restore(fsync="off"))[0].startswith("NON-DURABLE (fsync off)")
    meta = {"kind": "file", "reason": "PostgreSQL client tools not found (psql) on PATH", "files": 2048,
            "bytes": 16_800_000, "archive_bytes": 1_200_000, "size_mb": 16}
    results = [{"test": "restore", "metric": f"file_restore.{k}", "value": v, "unit": "s", "metadata": meta}
               for k, v in (("extract_s", 1.5), ("sync_s", 0.5), ("total_s", 2.0), ("mbps", 8.01),
                            ("files_per_s", 1024.0))]
    lines = summary_text("db1", "done", results, run_id=10).splitlines()
    assert lines[1] == "  FILE-LEVEL restore (no PostgreSQL): PostgreSQL client tools not found (psql) on PATH"
    assert lines[-1].split() == ["file", "level", "1.50", "0.500", "2.00", "8.01", "1,024"]
    assert caveats(results)[0].startswith("FILE-LEVEL restore (no PostgreSQL)")
