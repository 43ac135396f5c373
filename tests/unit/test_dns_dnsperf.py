"""dnsperf's output read back: its statistics, its per-second rates and its -v lines (dnsperf 2.10.0's words)."""
import pytest

from remote.agent import dns_dnsperf, dns_stats

OUTPUT = """\
DNS Performance Testing Tool
Version 2.10.0

[Status] Command line: dnsperf -s 127.0.0.1 -p 58972 -d queries.txt -n 2 -t 1 -v -S 1
[Status] Sending queries (to 127.0.0.1:58972)
[Status] Started at: Thu Nov 26 08:49:51 2026
[Status] Stopping after 2 runs through file
1795683339.853301: 0.000000
> NOERROR ok.test A 0.000226
> NXDOMAIN nx-a.test A 0.000323
> NOERROR ok.test A 0.001291
1795683340.854511: 499.395731
> NXDOMAIN nx-a.test A 0.001286
> NOERROR slow20-a.test A 0.021438
> NOERROR slow20-a.test A 0.023269
> T drop-x.test A
> T drop-x.test A
[Status] Testing complete (end of file)

Statistics:

  Queries sent:         8
  Queries completed:    6 (75.00%)
  Queries lost:         2 (25.00%)

  Response codes:       NOERROR 4 (66.67%), NXDOMAIN 2 (33.33%)
  Average packet size:  request 28, response 38
  Run time (s):         0.025202
  Queries per second:   238.076343

  Average Latency (s):  0.007972 (min 0.000226, max 0.023269)
  Latency StdDev (s):   0.011164
"""


def test_dnsperfs_statistics_rates_and_each_query():
    found = dns_dnsperf.parse(OUTPUT, "127.0.0.1:58972")
    assert (found["sent"], found["completed"], found["lost"]) == (8, 6, 2)
    assert found["rcodes"] == {"NOERROR": 4, "NXDOMAIN": 2}
    assert found["qps"] == pytest.approx(238.076343) and found["run_s"] == pytest.approx(0.025202)
    assert (found["mean_ms"], found["min_ms"], found["max_ms"]) == pytest.approx((7.972, 0.226, 23.269))
    assert found["ticks"] == [(1795683339.853301, 0.0), (1795683340.854511, 499.395731)]
    figures = dns_stats.summarise(found["columns"], found["run_s"])
    assert (figures["answered"], figures["timeouts"]) == (6, 2)
    assert figures["rcodes"] == {"NOERROR": 4, "NXDOMAIN": 2} and figures["max_ms"] == pytest.approx(23.269)
    assert [s["name"] for s in figures["slowest"][:3]] == ["drop-x.test", "drop-x.test", "slow20-a.test"]


def test_dnsperfs_command_and_version(tmp_path):
    fake = tmp_path / "dnsperf"
    fake.write_text("#!/bin/sh\necho 'Usage: dnsperf' >&2\necho 'DNS Performance Testing Tool'\necho 'Version 2.10.0'\n"
                    "exit 1\n")
    fake.chmod(0o755)
    assert dns_dnsperf.version(str(fake)) == "2.10.0"
    argv = dns_dnsperf.argv("dnsperf", "::1", 5353, "/run/q.txt", 10, 100, 500.0, 3.0, True)
    assert argv == ["dnsperf", "-s", "::1", "-p", "5353", "-d", "/run/q.txt", "-l", "10", "-q", "100", "-t", "3",
                    "-S", "1", "-v", "-Q", "500", "-e"]
