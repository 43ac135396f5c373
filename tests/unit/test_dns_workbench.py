"""The dns test on the workbench: the summary a user reads, the local query list uploaded, what compare reads."""
from __future__ import annotations

from pathlib import Path

import pytest

from app.compare.metrics import figures
from app.engine.orchestrator import RunRequest, validate_request
from app.engine.run_files import FilesError, with_files
from app.report.methodology import dns_sentences
from app.summary.dns import dns_passes
from app.summary.text import summary_text
from remote.agent import dns_stats


class Collect:
    def __init__(self) -> None:
        self.results: list[dict] = []

    def result(self, test, metric, value, unit, metadata=None) -> None:
        self.results.append({"test": test, "metric": metric, "value": float(value), "unit": unit,
                             "metadata": metadata or {}})


def _records(slow: float, timeouts: int) -> list[dict]:
    out = [{"name": f"ok{i}.example", "qtype": "A", "latency_ms": 1.0 + i / 100, "rcode": "NOERROR", "tries": 1,
            "via": "udp"} for i in range(95)]
    out.append({"name": "slow.example", "qtype": "AAAA", "latency_ms": slow, "rcode": "NOERROR", "tries": 1,
                "via": "tcp"})
    out.append({"name": "gone.example", "qtype": "A", "latency_ms": 4.0, "rcode": "NXDOMAIN", "tries": 1,
                "via": "udp"})
    out += [{"name": f"dead{i}.example", "qtype": "A", "latency_ms": None, "rcode": None, "tries": 2, "via": "udp"}
            for i in range(timeouts)]
    return out


def _run_results() -> list[dict]:
    ctx = Collect()
    base = {"engine": "builtin", "source": "squid uploaded queries-access.log (99 queries)", "order": "sequential",
            "in_flight": 10, "timeouts": "1,2", "tcp_fallback": True, "mode": "replay", "stamps": "read"}
    for resolver, slow, missed in (("10.0.0.2:53", 2500.0, 2), ("127.0.0.53:53", 40.0, 0)):
        for pass_name in ("cold", "warm"):
            records = _records(slow, missed)
            figures_ = dns_stats.summarise(dns_stats.Columns.of_records(records), 7.5 if missed else 0.9)
            dns_stats.emit(ctx, figures_, dict(base, resolver=resolver, queries=len(records), **{"pass": pass_name}))
    return ctx.results


def test_the_summary_names_each_resolver_its_counts_tail_and_slowest_names() -> None:
    results = _run_results()
    text = summary_text("proxy1", "done", results, run_id=7)
    lines = text.splitlines()
    header = next(line for line in lines if "resolver" in line)
    for column in ("answered", "NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "timeouts", "p50 ms", "p99 ms",
                   "max ms", "total s"):
        assert column in header
    row = next(line for line in lines if line.strip().startswith("10.0.0.2:53") and " cold " in line).split()
    assert row[:9] == ["10.0.0.2:53", "cold", "97", "96", "1", "0", "0", "0", "2"]
    assert "2,500" in row and "7.50" in row
    assert ("slowest, 10.0.0.2:53 cold: timeouts dead0.example A, dead1.example A; slow.example AAAA "
            "2,500 ms, tcp") in text
    assert "(2 resent, 1 over TCP, 2 timed out)" in text
    assert "queries: squid uploaded queries-access.log (99 queries); sequential, 10 in flight, stub waits 1,2 s" in text
    passes = dns_passes(results)
    assert [(p.resolver, p.pass_name) for p in passes] == [("10.0.0.2:53", "cold"), ("10.0.0.2:53", "warm"),
                                                           ("127.0.0.53:53", "cold"), ("127.0.0.53:53", "warm")]
    assert passes[0].cdf[-1][1] == pytest.approx(97 / 99, abs=1e-6)


def test_many_timeouts_do_not_hide_the_slow_names_that_answered() -> None:
    ctx = Collect()
    records = _records(900.0, 25)
    figures_ = dns_stats.summarise(dns_stats.Columns.of_records(records), 9.0)
    assert [s["ms"] for s in figures_["slowest"]].count(None) == 20 and len(figures_["slowest"]) == 40
    dns_stats.emit(ctx, figures_, {"resolver": "10.0.0.2:53", "pass": "cold", "engine": "builtin", "queries": 122,
                                   "source": "x"})
    text = summary_text("proxy1", "done", ctx.results)
    assert ("slowest, 10.0.0.2:53 cold: timeouts dead0.example A, dead1.example A, dead2.example A (+22 more); "
            "slow.example AAAA 900 ms, tcp; gone.example A 4.0 ms, NXDOMAIN") in text


def test_a_comparison_reads_the_first_resolvers_cold_pass_and_says_so() -> None:
    found = figures(_run_results())
    assert found["dns:total_s"].value == 7.5 and found["dns:p99_ms"].value > 40
    assert found["dns:total_s"].note == "10.0.0.2:53, cold pass"


def test_the_methodology_says_what_was_sent_and_what_a_timeout_is() -> None:
    class R:
        def __init__(self, d: dict) -> None:
            self.test, self.metric, self.metadata = d["test"], d["metric"], d["metadata"]

    text = " ".join(dns_sentences({"order": "sequential", "passes": "cold,warm", "in_flight": 10, "timeouts": "1,2",
                                   "tcp_fallback": True}, [R(r) for r in _run_results()]))
    assert "10.0.0.2:53, 127.0.0.53:53" in text and "cold then warm passes" in text
    assert "waits of 1,2 s" in text and "asked again over TCP" in text
    assert "Latencies run from the first send to the answer's read, as dnsperf times them, and cover" in text
    kernel = [R(dict(r, metadata=dict(r["metadata"], stamps="kernel"))) for r in _run_results()]
    assert "to the answer's arrival as the host's kernel stamped it" in " ".join(dns_sentences({}, kernel))


def test_a_local_query_list_is_uploaded_and_a_host_path_stays_the_hosts(tmp_path: Path) -> None:
    local = tmp_path / "proxy access.log"
    local.write_text("www.example.com A\n")
    request = with_files(RunRequest("h", "dns", {"resolvers": "10.0.0.2", "queries": str(local)}))
    assert request.params["queries"] == "upload:queries-proxy_access.log"
    assert request.files == (("queries-proxy_access.log", b"www.example.com A\n"),)
    assert request.file_sources[0][1:3] == (str(local.resolve()), 18)
    assert validate_request(request)["queries"] == "upload:queries-proxy_access.log"
    assert with_files(request) is request      # once only
    there = with_files(RunRequest("h", "dns", {"queries": "host:" + str(local)}))
    assert there.params["queries"] == str(local) and there.files == ()
    missing = with_files(RunRequest("h", "dns", {"queries": "/var/log/squid/access.log"}))
    assert missing.params["queries"] == "/var/log/squid/access.log" and missing.files == ()
    assert with_files(RunRequest("h", "disk", {"queries": str(local)})).files == ()
    with pytest.raises(FilesError, match="no query list nowhere.txt here"):
        with_files(RunRequest("h", "dns", {"queries": "nowhere.txt"}))


def test_a_query_list_too_large_to_upload_says_so(tmp_path: Path, monkeypatch) -> None:
    from app.engine import run_files

    monkeypatch.setattr(run_files, "MAX_UPLOAD_BYTES", 10)
    local = tmp_path / "big.txt"
    local.write_text("www.example.com A\n" * 3)
    with pytest.raises(FilesError, match="larger than"):
        with_files(RunRequest("h", "dns", {"queries": str(local)}))


def test_each_second_of_a_dns_run_is_a_progress_line() -> None:
    import io

    from app.cli.run_progress import RunProgress

    out = io.StringIO()
    progress = RunProgress(out=out)
    progress.event("proxy1", {"type": "dns_tick", "resolver": "10.0.0.2:53", "pass": "cold", "second": 2,
                              "answered": 1234, "timeouts": 2, "lat_ms": {"p50": 1.234, "p90": 3.4, "p99": 40.2}})
    assert out.getvalue() == ("proxy1:   10.0.0.2:53 cold, second 3: 1,234 answered, p50 1.23 ms, p90 3.4 ms, "
                              "p99 40.2 ms, 2 timeouts\n")


def test_a_comparison_of_runs_with_other_lists_or_engines_says_so() -> None:
    from app.compare.caveats import between_caveats

    one = _run_results()
    two = [dict(r, metadata=dict(r["metadata"], engine="dnsperf 2.10.0", source="builtin list (463 queries)"))
           for r in _run_results()]
    texts = {c.tag: c for c in between_caveats([("proxy1", one), ("proxy2", two)])}
    assert set(texts) == {"engines differ", "query lists differ"}
    assert "built-in on proxy1; dnsperf 2.10.0 on proxy2" in texts["engines differ"].text
    assert texts["query lists differ"].keys == ("dns:total_s", "dns:p50_ms", "dns:p99_ms")
    assert between_caveats([("proxy1", one), ("proxy2", _run_results())]) == []


def test_a_comparison_of_runs_that_timed_answers_differently_says_so() -> None:
    from app.compare.caveats import between_caveats

    def timed(stamps: str | None) -> list[dict]:
        out = [dict(r, metadata=dict(r["metadata"], stamps=stamps)) for r in _run_results()]
        return [dict(r, metadata={k: v for k, v in r["metadata"].items() if v is not None}) for r in out]

    texts = {c.tag: c for c in between_caveats([("proxy1", timed("read")), ("proxy2", timed("kernel"))])}
    assert set(texts) == {"answers timed differently"}
    assert ("answers timed when read, as dnsperf does on proxy1; answers timed at the kernel's receive time "
            "(the host's own read delay left out) on proxy2") in texts["answers timed differently"].text
    # a run stored before runs said how they timed answers is not called different
    assert between_caveats([("proxy1", timed(None)), ("proxy2", timed("kernel"))]) == []
